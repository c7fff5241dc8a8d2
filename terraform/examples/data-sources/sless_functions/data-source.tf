# Every function of the namespace (the provider reads every page of the list).
data "sless_functions" "all" {}

output "function_names" {
  value = data.sless_functions.all.names
}
