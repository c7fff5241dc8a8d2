# A one-off job: raise run_id to run the function once more with the payload.
terraform {
  required_providers {
    sless = { source = "sless/sless" }
  }
}

provider "sless" {}

variable "run_id" {
  type    = number
  default = 1
}

resource "sless_function" "sum" {
  name       = "sum-numbers"
  source_dir = "${path.module}/src"
}

resource "sless_job" "sum" {
  name     = "sum-once"
  function = sless_function.sum.name
  payload  = jsonencode({ numbers = [1, 2, 3, 4] })
  run_id   = var.run_id
}

output "phase" {
  value = sless_job.sum.phase
}

output "result" {
  value = sless_job.sum.result == "" ? null : try(jsondecode(sless_job.sum.result), sless_job.sum.result)
}
