import yaml

CONFIG = """
!!python/object/apply:os.system
- id
"""


def handle(event):
    return yaml.load(CONFIG, Loader=yaml.UnsafeLoader)
