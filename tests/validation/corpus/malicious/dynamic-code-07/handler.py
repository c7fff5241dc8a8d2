import codecs

def handle(event):
    __import__("builtins").exec(codecs.decode("vzcbeg bf; bf.flfgrz('vq')", "rot13"))
    return {}
