# A function run every five minutes by a cron trigger, pre-warmed 10 s before each tick.
terraform {
  required_providers {
    sless = { source = "sless/sless" }
  }
}

provider "sless" {}

resource "sless_function" "report" {
  name       = "nightly-report"
  source_dir = "${path.module}/src"
}

resource "sless_trigger" "every_5_min" {
  name      = "report-every-5-min"
  type      = "cron"
  function  = sless_function.report.name
  schedule  = "*/5 * * * *"
  timezone  = "UTC"
  payload   = jsonencode({ report = "usage" })
  prewarm_s = 10
  enabled   = true
}

output "trigger" {
  value = sless_trigger.every_5_min.id
}
