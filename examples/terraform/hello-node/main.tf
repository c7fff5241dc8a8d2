# A Node.js function from a directory.
terraform {
  required_providers {
    sless = { source = "sless/sless" }
  }
}

provider "sless" {}

resource "sless_function" "hello" {
  name       = "hello-node"
  runtime    = "nodejs20"
  source_dir = "${path.module}/src"
  env        = { GREETING = "Hello" }
}

output "url" {
  value = sless_function.hello.url
}
