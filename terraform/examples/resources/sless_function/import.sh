# a function is imported by its name
terraform import sless_function.hello hello
