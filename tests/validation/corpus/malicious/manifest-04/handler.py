def handle(event):
    return 'ok'
