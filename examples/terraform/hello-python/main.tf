# A Python function from a directory. Run with SLESS_ENDPOINT and SLESS_TOKEN set
# (or fill in the provider block), then: tofu apply / terraform apply.
terraform {
  required_providers {
    sless = { source = "sless/sless" }
  }
}

provider "sless" {
  # endpoint = "http://127.0.0.1:8080"   # or SLESS_ENDPOINT
  # token    = var.sless_token           # or SLESS_TOKEN
}

resource "sless_function" "hello" {
  name       = "hello-python"
  runtime    = "python3.11"
  source_dir = "${path.module}/src"
  env        = { GREETING = "Hello" }
  memory_mb  = 128
  timeout_s  = 10
}

output "url" {
  value = sless_function.hello.url
}

output "sha256" {
  value = sless_function.hello.sha256
}
