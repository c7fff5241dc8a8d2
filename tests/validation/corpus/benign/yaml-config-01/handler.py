import yaml

DEFAULTS = """
retries: 3
backoff: 1.5
endpoints:
  - name: primary
    url: https://api.example.com
"""


def handle(event, context=None):
    cfg = yaml.safe_load(DEFAULTS)
    cfg.update(yaml.safe_load(event.get("overrides", "")) or {})
    return cfg
