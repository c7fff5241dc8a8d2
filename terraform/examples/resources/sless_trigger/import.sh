# a trigger is imported by its name
terraform import sless_trigger.nightly nightly
