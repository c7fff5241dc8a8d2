terraform {
  required_providers {
    sless = { source = "sless/sless" }
  }
}

# endpoint and token may also come from SLESS_ENDPOINT and SLESS_TOKEN
provider "sless" {
  endpoint = "https://sless.example.com"
  token    = var.sless_token # a tenant token, sl_t_...
}

variable "sless_token" {
  type      = string
  sensitive = true
}
