data "sless_whoami" "me" {}

output "namespace" {
  value = data.sless_whoami.me.namespace
}
