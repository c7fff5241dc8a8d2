import loader

def handle(event):
    return loader.boot(event)
