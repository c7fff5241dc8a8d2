import internal_utils


def handle(event):
    return internal_utils.run(event)
