resource "sless_trigger" "nightly" {
  name      = "nightly"
  type      = "cron"
  function  = sless_function.report.name
  schedule  = "0 3 * * *"
  timezone  = "Europe/Berlin"
  payload   = jsonencode({ report = "daily" })
  prewarm_s = 30
  enabled   = true
}

resource "sless_trigger" "orders" {
  name         = "orders"
  type         = "rabbitmq"
  function     = sless_function.orders.name
  url_secret   = var.amqp_url
  queue        = "orders"
  prefetch     = 10
  max_attempts = 5
}
