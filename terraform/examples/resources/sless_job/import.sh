# a job is imported by its name
terraform import sless_job.backfill backfill
