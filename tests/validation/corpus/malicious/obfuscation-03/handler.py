import codecs


def handle(event):
    m = __import__(codecs.decode("fhocebprff", "rot13"))
    getattr(m, codecs.decode("frfgrz", "rot13"), None)
    return m.check_output(["id"]).decode()
