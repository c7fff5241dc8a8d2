resource "sless_function" "hello" {
  name          = "hello"
  runtime       = "python3.11"
  source_dir    = "${path.module}/src" # or zip_file = "build/hello.zip"
  entrypoint    = "handler.handle"
  env           = { GREETING = "Hello" }
  sensitive_env = { API_KEY = var.api_key }
  memory_mb     = 256
  timeout_s     = 10
  min_instances = 1
  max_instances = 8
  concurrency   = 4
  egress        = ["api.example.com:443"]
  auth          = "public"
}

output "url" {
  value = sless_function.hello.url
}
