resource "sless_job" "backfill" {
  name     = "backfill"
  function = sless_function.backfill.name
  payload  = jsonencode({ since = "2026-01-01" })
  run_id   = 1 # raise to run again; 0 runs nothing
}

output "backfill_result" {
  value = sless_job.backfill.result
}
