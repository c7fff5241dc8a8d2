import pathlib

import yaml

CONFIG = yaml.safe_load((pathlib.Path(__file__).parent / "config.yaml").read_text())


def handle(event, context):
    return {"features": CONFIG.get("features", []), "version": CONFIG.get("version")}
