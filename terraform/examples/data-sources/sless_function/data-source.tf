data "sless_function" "hello" {
  name = "hello"
}

output "hello_phase" {
  value = data.sless_function.hello.phase
}
