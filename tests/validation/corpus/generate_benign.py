"""Writes corpus/benign/<kind>-<nn>/ samples: functions written the way tenants write them.

They deliberately include the look-alikes of malicious code: subprocess with captured
output, base64 of user data that is returned, hex digests, env vars read by name, sockets
to configured hosts, dynamic dispatch without eval, JSON/YAML parsing, embedded icons.
"""
import json
import shutil
from pathlib import Path

OUT = Path(__file__).parent / "benign"
SAMPLES = []


def add(kind, runtime, files):
    SAMPLES.append((kind, runtime, files))


ENTITIES = [
    ("invoice", "invoices", "amount"), ("order", "orders", "total"), ("user", "users", "email"),
    ("ticket", "tickets", "priority"), ("product", "products", "price"), ("booking", "bookings", "date"),
]

# ---------------------------------------------------------------- python: web handlers
for i, (one, many, field) in enumerate(ENTITIES[:5]):
    add("web-handler", "python", {"handler.py": f'''import json
from http import HTTPStatus

_STORE: dict[str, dict] = {{}}


def _response(status, body):
    return {{"statusCode": int(status), "headers": {{"content-type": "application/json"}}, "body": json.dumps(body)}}


def handle(event, context=None):
    method = event.get("httpMethod", "GET")
    {one}_id = (event.get("pathParameters") or {{}}).get("id")
    if method == "GET" and {one}_id:
        item = _STORE.get({one}_id)
        if item is None:
            return _response(HTTPStatus.NOT_FOUND, {{"error": "{one} not found"}})
        return _response(HTTPStatus.OK, item)
    if method == "GET":
        return _response(HTTPStatus.OK, {{"{many}": list(_STORE.values())}})
    if method == "POST":
        try:
            payload = json.loads(event.get("body") or "{{}}")
        except json.JSONDecodeError:
            return _response(HTTPStatus.BAD_REQUEST, {{"error": "invalid JSON"}})
        if "{field}" not in payload:
            return _response(HTTPStatus.UNPROCESSABLE_ENTITY, {{"error": "{field} is required"}})
        new_id = str(len(_STORE) + 1)
        _STORE[new_id] = {{"id": new_id, **payload}}
        return _response(HTTPStatus.CREATED, _STORE[new_id])
    return _response(HTTPStatus.METHOD_NOT_ALLOWED, {{"error": f"{{method}} not allowed"}})
'''})

for i, route in enumerate(["/health", "/version", "/echo", "/time"]):
    add("web-handler", "python", {"handler.py": f'''import datetime
import os
import platform

VERSION = os.environ.get("APP_VERSION", "0.0.0")


def handle(event, context=None):
    path = event.get("path", "{route}")
    if path == "/health":
        return {{"status": "ok"}}
    if path == "/version":
        return {{"version": VERSION, "python": platform.python_version()}}
    if path == "/echo":
        return {{"echo": event.get("body"), "headers": event.get("headers", {{}})}}
    if path == "/time":
        return {{"now": datetime.datetime.now(datetime.timezone.utc).isoformat()}}
    return {{"statusCode": 404}}
'''})

# fastapi-ish / flask-ish apps
add("web-handler", "python", {
    "handler.py": '''from flask import Flask, jsonify, request

app = Flask(__name__)
TODOS = []


@app.get("/todos")
def list_todos():
    done = request.args.get("done")
    items = [t for t in TODOS if done is None or str(t["done"]).lower() == done]
    return jsonify(items)


@app.post("/todos")
def create_todo():
    data = request.get_json(force=True)
    todo = {"id": len(TODOS) + 1, "title": data["title"][:200], "done": False}
    TODOS.append(todo)
    return jsonify(todo), 201


def handle(event, context=None):
    with app.test_request_context(event.get("path", "/todos"), method=event.get("httpMethod", "GET"), json=event.get("json")):
        return app.full_dispatch_request().get_json()
''',
    "requirements.txt": "flask==3.0.3\n",
})
add("web-handler", "python", {
    "handler.py": '''from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

app = FastAPI()


class Subscriber(BaseModel):
    email: str = Field(pattern=r"^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$")
    topics: list[str] = []


SUBSCRIBERS: dict[str, Subscriber] = {}


@app.post("/subscribe")
async def subscribe(sub: Subscriber):
    if sub.email in SUBSCRIBERS:
        raise HTTPException(409, "already subscribed")
    SUBSCRIBERS[sub.email] = sub
    return {"subscribed": sub.email}


@app.delete("/subscribe/{email}")
async def unsubscribe(email: str):
    SUBSCRIBERS.pop(email, None)
    return {"unsubscribed": email}
''',
    "requirements.txt": "fastapi>=0.110\npydantic>=2.7\n",
})

# ---------------------------------------------------------------- python: db clients
for i, (one, many, field) in enumerate(ENTITIES[:4]):
    add("db-client", "python", {
        "handler.py": f'''import os

import psycopg

DSN = os.environ["DATABASE_URL"]


def handle(event, context=None):
    limit = min(int(event.get("limit", 20)), 100)
    with psycopg.connect(DSN) as conn, conn.cursor() as cur:
        cur.execute("SELECT id, {field}, created_at FROM {many} ORDER BY created_at DESC LIMIT %s", (limit,))
        rows = cur.fetchall()
    return {{"{many}": [{{"id": r[0], "{field}": r[1], "created_at": r[2].isoformat()}} for r in rows]}}
''',
        "requirements.txt": "psycopg[binary]==3.1.19\n",
    })
add("db-client", "python", {
    "handler.py": '''import os
import sqlite3

DB = os.environ.get("DB_PATH", "/tmp/notes.db")


def _conn():
    conn = sqlite3.connect(DB)
    conn.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    return conn


def handle(event, context=None):
    with _conn() as conn:
        if event.get("body"):
            conn.execute("INSERT INTO notes (body) VALUES (?)", (event["body"][:1000],))
        rows = conn.execute("SELECT id, body FROM notes ORDER BY id DESC LIMIT 10").fetchall()
    return [{"id": r[0], "body": r[1]} for r in rows]
'''})
add("db-client", "python", {
    "handler.py": '''import os

import redis

r = redis.Redis(host=os.environ.get("REDIS_HOST", "localhost"), port=int(os.environ.get("REDIS_PORT", "6379")), decode_responses=True)


def handle(event, context=None):
    key = f"ratelimit:{event['client_id']}"
    count = r.incr(key)
    if count == 1:
        r.expire(key, 60)
    return {"allowed": count <= 100, "count": count}
''',
    "requirements.txt": "redis==5.0.7\n",
})
add("db-client", "python", {
    "handler.py": '''import os

import boto3
from boto3.dynamodb.conditions import Key

table = boto3.resource("dynamodb").Table(os.environ["TABLE_NAME"])


def handle(event, context=None):
    customer = event["customer_id"]
    resp = table.query(KeyConditionExpression=Key("pk").eq(f"CUSTOMER#{customer}"), Limit=25)
    return {"items": resp.get("Items", []), "more": "LastEvaluatedKey" in resp}
''',
    "requirements.txt": "boto3>=1.34\n",
})
add("db-client", "python", {
    "handler.py": '''import os

from pymongo import MongoClient

client = MongoClient(os.environ["MONGO_URI"], serverSelectionTimeoutMS=2000)
events = client["analytics"]["events"]


def handle(event, context=None):
    pipeline = [
        {"$match": {"type": event.get("type", "pageview")}},
        {"$group": {"_id": "$path", "hits": {"$sum": 1}}},
        {"$sort": {"hits": -1}},
        {"$limit": 10},
    ]
    return list(events.aggregate(pipeline))
''',
    "requirements.txt": "pymongo==4.8.0\n",
})

# ---------------------------------------------------------------- python: http api clients
APIS = [
    ("weather", "https://api.open-meteo.com/v1/forecast", "params={'latitude': event['lat'], 'longitude': event['lon'], 'current_weather': True}"),
    ("github", "https://api.github.com/repos/{owner}/{repo}/releases/latest", "headers={'Accept': 'application/vnd.github+json'}"),
    ("exchange", "https://api.frankfurter.app/latest", "params={'from': event.get('base', 'EUR')}"),
    ("geocode", "https://nominatim.openstreetmap.org/search", "params={'q': event['q'], 'format': 'json'}, headers={'User-Agent': 'sless-fn/1.0'}"),
]
for name, url, kw in APIS:
    add("http-api", "python", {
        "handler.py": f'''import os

import requests

SESSION = requests.Session()
TIMEOUT = float(os.environ.get("HTTP_TIMEOUT", "5"))


def handle(event, context=None):
    url = "{url}".format(owner=event.get("owner", ""), repo=event.get("repo", ""))
    resp = SESSION.get(url, {kw}, timeout=TIMEOUT)
    resp.raise_for_status()
    data = resp.json()
    return {{"source": "{name}", "data": data}}
''',
        "requirements.txt": "requests==2.32.3\n",
    })
add("http-api", "python", {"handler.py": '''import json
import os
import urllib.request


def handle(event, context=None):
    token = os.environ["SLACK_BOT_TOKEN"]
    body = json.dumps({"channel": event["channel"], "text": event["text"][:3000]}).encode()
    req = urllib.request.Request(
        "https://slack.com/api/chat.postMessage",
        data=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json; charset=utf-8"},
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.load(resp)
'''})
add("http-api", "python", {
    "handler.py": '''import asyncio
import os

import httpx

API = os.environ.get("STATUS_API", "https://status.example.com/api")


async def _check(client, service):
    r = await client.get(f"{API}/services/{service}")
    return service, r.status_code == 200 and r.json().get("status") == "up"


async def main(services):
    async with httpx.AsyncClient(timeout=3) as client:
        return dict(await asyncio.gather(*(_check(client, s) for s in services)))


def handle(event, context=None):
    return asyncio.run(main(event.get("services", ["api", "web", "db"])))
''',
    "requirements.txt": "httpx==0.27.0\n",
})
add("http-api", "python", {"handler.py": '''import os

import stripe

stripe.api_key = os.environ["STRIPE_SECRET_KEY"]


def handle(event, context=None):
    intent = stripe.PaymentIntent.create(
        amount=int(event["amount_cents"]),
        currency=event.get("currency", "eur"),
        metadata={"order_id": event["order_id"]},
        automatic_payment_methods={"enabled": True},
    )
    return {"client_secret": intent.client_secret}
''', "requirements.txt": "stripe==10.3.0\n"})

# ---------------------------------------------------------------- python: image processing
for i, (op, code) in enumerate([
    ("thumbnail", "img.thumbnail((int(event.get('size', 256)),) * 2)"),
    ("grayscale", "img = ImageOps.grayscale(img)"),
    ("rotate", "img = img.rotate(int(event.get('degrees', 90)), expand=True)"),
    ("watermark", "ImageDraw.Draw(img).text((10, 10), event.get('text', 'sample'), fill=(255, 255, 255))"),
]):
    add("image", "python", {
        "handler.py": f'''import base64
import io

from PIL import Image, ImageDraw, ImageOps


def handle(event, context=None):
    raw = base64.b64decode(event["image_base64"])
    img = Image.open(io.BytesIO(raw)).convert("RGB")
    {code}
    out = io.BytesIO()
    img.save(out, format="PNG")
    return {{"op": "{op}", "image_base64": base64.b64encode(out.getvalue()).decode("ascii")}}
''',
        "requirements.txt": "Pillow==10.4.0\n",
    })
add("image", "python", {
    "handler.py": '''import os
import subprocess
import tempfile

import boto3

s3 = boto3.client("s3")


def handle(event, context=None):
    bucket, key = event["bucket"], event["key"]
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in" + os.path.splitext(key)[1])
        dst = os.path.join(tmp, "out.webp")
        s3.download_file(bucket, key, src)
        proc = subprocess.run(["convert", src, "-resize", "1024x1024>", "-quality", "80", dst],
                              capture_output=True, text=True, timeout=30)
        if proc.returncode != 0:
            return {"error": proc.stderr[-500:]}
        s3.upload_file(dst, bucket, key.rsplit(".", 1)[0] + ".webp")
    return {"converted": key}
''',
    "requirements.txt": "boto3>=1.34\n",
})
add("image", "python", {"handler.py": '''PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def handle(event, context=None):
    # 1x1 tracking pixel for email opens
    print({"opened": event.get("queryStringParameters", {}).get("m")})
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "image/png", "Cache-Control": "no-store"},
        "body": PIXEL,
        "isBase64Encoded": True,
    }
'''})
add("image", "python", {"handler.py": '''import io

import qrcode


def handle(event, context=None):
    img = qrcode.make(event["url"], box_size=8, border=2)
    buf = io.BytesIO()
    img.save(buf)
    return {"statusCode": 200, "headers": {"Content-Type": "image/png"}, "body": buf.getvalue().hex()}
''', "requirements.txt": "qrcode[pil]==7.4.2\n"})

# ---------------------------------------------------------------- python: text processing
add("text", "python", {"handler.py": '''import collections
import re

STOP = {"the", "a", "an", "and", "or", "of", "to", "in", "is", "it", "for", "on", "with"}


def handle(event, context=None):
    words = re.findall(r"[a-z']+", event["text"].lower())
    counts = collections.Counter(w for w in words if w not in STOP and len(w) > 2)
    return {"words": len(words), "top": counts.most_common(int(event.get("n", 10)))}
'''})
add("text", "python", {"handler.py": '''import unicodedata


def slugify(value: str) -> str:
    value = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode("ascii")
    out = []
    for ch in value.lower():
        if ch.isalnum():
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-")


def handle(event, context=None):
    return {"slug": slugify(event["title"])}
'''})
add("text", "python", {"handler.py": '''import csv
import io
import statistics


def handle(event, context=None):
    reader = csv.DictReader(io.StringIO(event["csv"]))
    column = event.get("column", "value")
    values = [float(row[column]) for row in reader if row.get(column)]
    if not values:
        return {"error": "no values"}
    return {
        "count": len(values),
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "stdev": statistics.pstdev(values),
    }
'''})
add("text", "python", {"handler.py": '''import markdown
import bleach

ALLOWED = ["p", "a", "em", "strong", "code", "pre", "ul", "ol", "li", "h1", "h2", "h3", "blockquote"]


def handle(event, context=None):
    html = markdown.markdown(event["markdown"], extensions=["fenced_code"])
    return {"html": bleach.clean(html, tags=ALLOWED, attributes={"a": ["href", "title"]})}
''', "requirements.txt": "markdown==3.6\nbleach==6.1.0\n"})
add("text", "python", {"handler.py": '''import difflib


def handle(event, context=None):
    a = event["before"].splitlines(keepends=True)
    b = event["after"].splitlines(keepends=True)
    diff = difflib.unified_diff(a, b, fromfile="before", tofile="after")
    ratio = difflib.SequenceMatcher(None, event["before"], event["after"]).ratio()
    return {"diff": "".join(diff), "similarity": round(ratio, 3)}
'''})
add("text", "python", {"handler.py": '''import re

EMAIL = re.compile(r"[\\w.+-]+@[\\w-]+\\.[\\w.-]+")
PHONE = re.compile(r"\\+?\\d[\\d\\s().-]{7,}\\d")


def redact(text: str) -> str:
    text = EMAIL.sub("[email]", text)
    return PHONE.sub("[phone]", text)


def handle(event, context=None):
    return {"text": redact(event["text"])}
'''})
add("text", "python", {"handler.py": '''def caesar(text: str, shift: int) -> str:
    out = []
    for ch in text:
        if ch.isalpha():
            base = ord("A") if ch.isupper() else ord("a")
            out.append(chr((ord(ch) - base + shift) % 26 + base))
        else:
            out.append(ch)
    return "".join(out)


def handle(event, context=None):
    shift = int(event.get("shift", 3))
    return {"encoded": caesar(event["text"], shift), "alphabet": "".join(chr(ord("a") + i) for i in range(26))}
'''})
add("text", "python", {"handler.py": '''import textwrap


def handle(event, context=None):
    width = max(20, min(int(event.get("width", 72)), 200))
    paragraphs = [p.strip() for p in event["text"].split("\\n\\n") if p.strip()]
    wrapped = "\\n\\n".join(textwrap.fill(p, width=width) for p in paragraphs)
    return {"text": wrapped, "palindrome": event["text"].lower() == event["text"].lower()[::-1]}
'''})

# ---------------------------------------------------------------- python: legit subprocess
for tool, args in [("ffmpeg", '["ffmpeg", "-y", "-i", src, "-vn", "-acodec", "libmp3lame", dst]'),
                   ("pandoc", '["pandoc", src, "-o", dst]'),
                   ("pdftotext", '["pdftotext", "-layout", src, dst]')]:
    add("subprocess", "python", {"handler.py": f'''import base64
import pathlib
import subprocess
import tempfile


def handle(event, context=None):
    with tempfile.TemporaryDirectory() as tmp:
        src = str(pathlib.Path(tmp) / "input")
        dst = str(pathlib.Path(tmp) / "output")
        pathlib.Path(src).write_bytes(base64.b64decode(event["file"]))
        result = subprocess.run({args}, capture_output=True, timeout=60, check=False)
        if result.returncode != 0:
            return {{"tool": "{tool}", "error": result.stderr.decode(errors="replace")[-1000:]}}
        return {{"tool": "{tool}", "output": base64.b64encode(pathlib.Path(dst).read_bytes()).decode()}}
'''})
add("subprocess", "python", {"handler.py": '''import shutil
import subprocess


def handle(event, context=None):
    git = shutil.which("git")
    if git is None:
        return {"error": "git not available"}
    out = subprocess.run([git, "--version"], capture_output=True, text=True, check=True)
    env_out = subprocess.run(["env"], capture_output=True, text=True, env={"LC_ALL": "C"}, check=True)
    return {"git": out.stdout.strip(), "locale_vars": len(env_out.stdout.splitlines())}
'''})
add("subprocess", "python", {"handler.py": '''import os
import subprocess


def handle(event, context=None):
    env = {**os.environ, "TZ": event.get("tz", "UTC")}
    result = subprocess.run(["date", "+%Y-%m-%dT%H:%M:%S%z"], capture_output=True, text=True, env=env, check=True)
    return {"now": result.stdout.strip()}
'''})

# ---------------------------------------------------------------- python: base64 / encoding
add("base64", "python", {"handler.py": '''import base64
import binascii


def handle(event, context=None):
    try:
        data = base64.b64decode(event["data"], validate=True)
    except (binascii.Error, KeyError):
        return {"statusCode": 400, "body": "data must be base64"}
    return {"bytes": len(data), "hex": data[:32].hex(), "urlsafe": base64.urlsafe_b64encode(data).decode()}
'''})
add("base64", "python", {"handler.py": '''import base64
import json


def handle(event, context=None):
    # API Gateway passes binary bodies base64-encoded
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        body = base64.b64decode(body).decode("utf-8")
    payload = json.loads(body or "{}")
    return {"statusCode": 200, "body": json.dumps({"received": sorted(payload)})}
'''})
add("base64", "python", {"handler.py": '''import base64
import json


def _b64url_decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def handle(event, context=None):
    """Show the (unverified) claims of a JWT for debugging; never trust them."""
    token = event["headers"]["authorization"].removeprefix("Bearer ")
    header, claims, _sig = token.split(".")
    return {"header": json.loads(_b64url_decode(header)), "claims": json.loads(_b64url_decode(claims))}
'''})
add("base64", "python", {"handler.py": '''import gzip
import base64
import json


def handle(event, context=None):
    # CloudWatch Logs subscription payloads are gzipped and base64-encoded
    data = json.loads(gzip.decompress(base64.b64decode(event["awslogs"]["data"])))
    errors = [e["message"] for e in data["logEvents"] if "ERROR" in e["message"]]
    return {"group": data["logGroup"], "errors": errors[:50]}
'''})

# ---------------------------------------------------------------- python: dynamic code without eval
add("dynamic-dispatch", "python", {
    "handler.py": '''import importlib

ALLOWED = {"resize": "ops.resize", "stats": "ops.stats"}


def handle(event, context=None):
    name = event.get("op")
    if name not in ALLOWED:
        return {"error": f"unknown op {name!r}"}
    module = importlib.import_module(ALLOWED[name])
    return module.run(event.get("args", {}))
''',
    "ops/__init__.py": "",
    "ops/resize.py": "def run(args):\n    w, h = args.get('w', 100), args.get('h', 100)\n    return {'w': w // 2, 'h': h // 2}\n",
    "ops/stats.py": "import statistics\n\n\ndef run(args):\n    xs = args.get('xs', [0])\n    return {'mean': statistics.fmean(xs)}\n",
})
add("dynamic-dispatch", "python", {"handler.py": '''class Calculator:
    def add(self, a, b):
        return a + b

    def sub(self, a, b):
        return a - b

    def mul(self, a, b):
        return a * b


def handle(event, context=None):
    calc = Calculator()
    op = getattr(calc, event["op"], None)
    if op is None or event["op"].startswith("_"):
        return {"error": "unsupported"}
    return {"result": op(float(event["a"]), float(event["b"]))}
'''})
add("dynamic-dispatch", "python", {"handler.py": '''import ast
import operator

OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv, ast.USub: operator.neg}


def _eval(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        return OPS[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in OPS:
        return OPS[type(node.op)](_eval(node.operand))
    raise ValueError("unsupported expression")


def handle(event, context=None):
    tree = ast.parse(event["expr"], mode="eval")
    return {"value": _eval(tree.body)}
'''})
add("dynamic-dispatch", "python", {"handler.py": '''from typing import Callable

HANDLERS: dict[str, Callable[[dict], dict]] = {}


def route(name):
    def register(fn):
        HANDLERS[name] = fn
        return fn
    return register


@route("ping")
def ping(event):
    return {"pong": True}


@route("sum")
def total(event):
    return {"sum": sum(event.get("values", []))}


def handle(event, context=None):
    fn = HANDLERS.get(event.get("action", "ping"))
    return fn(event) if fn else {"error": "no such action"}
'''})

# ---------------------------------------------------------------- python: templating, validation, crypto, misc
add("templating", "python", {"handler.py": '''from jinja2 import Environment, select_autoescape, DictLoader

env = Environment(loader=DictLoader({
    "receipt.html": "<h1>Receipt {{ number }}</h1><ul>{% for l in lines %}<li>{{ l.name }}: {{ '%.2f'|format(l.price) }}</li>{% endfor %}</ul>",
}), autoescape=select_autoescape())


def handle(event, context=None):
    html = env.get_template("receipt.html").render(number=event["number"], lines=event["lines"])
    return {"statusCode": 200, "headers": {"Content-Type": "text/html"}, "body": html}
''', "requirements.txt": "jinja2==3.1.4\n"})
add("templating", "python", {"handler.py": '''import string

TEMPLATE = string.Template("Hello $name,\\n\\nYour order $order ships on $date.\\n\\nThanks!")


def handle(event, context=None):
    return {"email": TEMPLATE.safe_substitute(name=event["name"], order=event["order"], date=event["date"])}
'''})
add("validation", "python", {"handler.py": '''import re
from datetime import date

IBAN = re.compile(r"^[A-Z]{2}\\d{2}[A-Z0-9]{11,30}$")


def iban_ok(value: str) -> bool:
    value = value.replace(" ", "").upper()
    if not IBAN.match(value):
        return False
    rearranged = value[4:] + value[:4]
    digits = "".join(str(int(c, 36)) for c in rearranged)
    return int(digits) % 97 == 1


def handle(event, context=None):
    errors = {}
    if not iban_ok(event.get("iban", "")):
        errors["iban"] = "invalid IBAN"
    try:
        date.fromisoformat(event.get("birthdate", ""))
    except ValueError:
        errors["birthdate"] = "use YYYY-MM-DD"
    return {"valid": not errors, "errors": errors}
'''})
add("validation", "python", {"handler.py": '''import jsonschema

SCHEMA = {
    "type": "object",
    "required": ["name", "quantity"],
    "properties": {"name": {"type": "string", "maxLength": 100}, "quantity": {"type": "integer", "minimum": 1}},
    "additionalProperties": False,
}


def handle(event, context=None):
    validator = jsonschema.Draft202012Validator(SCHEMA)
    errors = [e.message for e in validator.iter_errors(event)]
    return {"ok": not errors, "errors": errors}
''', "requirements.txt": "jsonschema==4.23.0\n"})
add("crypto-hash", "python", {"handler.py": '''import hashlib
import hmac
import os
import time

SECRET = os.environ["WEBHOOK_SECRET"].encode()


def handle(event, context=None):
    headers = {k.lower(): v for k, v in event["headers"].items()}
    timestamp = headers["x-signature-timestamp"]
    if abs(time.time() - int(timestamp)) > 300:
        return {"statusCode": 401}
    expected = hmac.new(SECRET, f"{timestamp}.{event['body']}".encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, headers.get("x-signature", "")):
        return {"statusCode": 401}
    return {"statusCode": 204}
'''})
add("crypto-hash", "python", {"handler.py": '''import hashlib
import base64

EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def handle(event, context=None):
    data = base64.b64decode(event.get("file", ""))
    digest = hashlib.sha256(data).hexdigest()
    return {"sha256": digest, "md5": hashlib.md5(data, usedforsecurity=False).hexdigest(), "empty": digest == EMPTY_SHA256}
'''})
add("crypto-hash", "python", {"handler.py": '''import hashlib
import os
import secrets


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    dk = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)
    return f"scrypt${salt.hex()}${dk.hex()}"


def handle(event, context=None):
    pepper = os.environ.get("PEPPER", "")
    return {"hash": hash_password(event["password"] + pepper)}
'''})
add("crypto-hash", "python", {"handler.py": '''from cryptography.fernet import Fernet
import os

f = Fernet(os.environ["FERNET_KEY"])


def handle(event, context=None):
    if event.get("decrypt"):
        return {"plaintext": f.decrypt(event["token"].encode()).decode()}
    return {"token": f.encrypt(event["plaintext"].encode()).decode()}
''', "requirements.txt": "cryptography==43.0.0\n"})
add("queue", "python", {"handler.py": '''import json
import os

import boto3

sqs = boto3.client("sqs")
QUEUE = os.environ["QUEUE_URL"]


def handle(event, context=None):
    failures = []
    for record in event.get("Records", []):
        try:
            msg = json.loads(record["body"])
            sqs.send_message(QueueUrl=QUEUE, MessageBody=json.dumps({"id": msg["id"], "status": "processed"}))
        except (KeyError, json.JSONDecodeError):
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
''', "requirements.txt": "boto3>=1.34\n"})
add("s3", "python", {"handler.py": '''import os
import urllib.parse

import boto3

s3 = boto3.client("s3")


def handle(event, context=None):
    out = []
    for rec in event["Records"]:
        bucket = rec["s3"]["bucket"]["name"]
        key = urllib.parse.unquote_plus(rec["s3"]["object"]["key"])
        head = s3.head_object(Bucket=bucket, Key=key)
        out.append({"key": key, "size": head["ContentLength"], "type": head.get("ContentType")})
    url = s3.generate_presigned_url("get_object", Params={"Bucket": os.environ["BUCKET"], "Key": "report.csv"}, ExpiresIn=300)
    return {"objects": out, "report": url}
'''})
add("cron", "python", {"handler.py": '''import datetime
import logging
import os

import requests

log = logging.getLogger(__name__)


def handle(event, context=None):
    since = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1)
    r = requests.get(os.environ["METRICS_URL"], params={"since": since.isoformat()}, timeout=10)
    r.raise_for_status()
    summary = {k: sum(v) for k, v in r.json().items()}
    log.info("daily summary: %s", summary)
    return summary
''', "requirements.txt": "requests==2.32.3\n"})
add("socket-client", "python", {"handler.py": '''import os
import socket


def handle(event, context=None):
    host = os.environ["SMTP_HOST"]
    port = int(os.environ.get("SMTP_PORT", "25"))
    with socket.create_connection((host, port), timeout=3) as s:
        banner = s.recv(512).decode(errors="replace")
        s.sendall(b"QUIT\\r\\n")
    return {"reachable": True, "banner": banner.strip()}
'''})
add("threads", "python", {"handler.py": '''import concurrent.futures
import os

import requests

URLS = os.environ.get("CHECK_URLS", "https://example.com,https://example.org").split(",")


def check(url):
    try:
        return url, requests.head(url, timeout=3, allow_redirects=True).status_code
    except requests.RequestException as e:
        return url, str(e)


def handle(event, context=None):
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(check, URLS))
''', "requirements.txt": "requests==2.32.3\n"})
add("llm-app", "python", {"handler.py": '''import os

from openai import OpenAI

client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])
SYSTEM = "You are a helpful assistant that summarises customer support emails in two sentences."


def handle(event, context=None):
    resp = client.chat.completions.create(
        model=os.environ.get("MODEL", "gpt-4o-mini"),
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": event["email"][:8000]}],
    )
    return {"summary": resp.choices[0].message.content}
''', "requirements.txt": "openai>=1.40\n"})
add("yaml-config", "python", {"handler.py": '''import yaml

DEFAULTS = """
retries: 3
backoff: 1.5
endpoints:
  - name: primary
    url: https://api.example.com
"""


def handle(event, context=None):
    cfg = yaml.safe_load(DEFAULTS)
    cfg.update(yaml.safe_load(event.get("overrides", "")) or {})
    return cfg
''', "requirements.txt": "PyYAML==6.0.1\n"})
add("pickle-cache", "python", {"handler.py": '''import os
import pickle

import boto3

s3 = boto3.client("s3")


def handle(event, context=None):
    obj = s3.get_object(Bucket=os.environ["MODEL_BUCKET"], Key="model.pkl")
    model = pickle.loads(obj["Body"].read())
    return {"prediction": float(model.predict([event["features"]])[0])}
''', "requirements.txt": "boto3>=1.34\nscikit-learn==1.5.1\n"})

# ---------------------------------------------------------------- node: web handlers
for one, many, field in ENTITIES:
    add("web-handler", "node", {"handler.js": f'''const store = new Map();

const json = (statusCode, body) => ({{
  statusCode,
  headers: {{ "content-type": "application/json" }},
  body: JSON.stringify(body),
}});

exports.handler = async (event) => {{
  const id = event.pathParameters && event.pathParameters.id;
  switch (event.httpMethod) {{
    case "GET":
      if (id) return store.has(id) ? json(200, store.get(id)) : json(404, {{ error: "{one} not found" }});
      return json(200, {{ {many}: [...store.values()] }});
    case "POST": {{
      let body;
      try {{
        body = JSON.parse(event.body || "{{}}");
      }} catch (e) {{
        return json(400, {{ error: "invalid JSON" }});
      }}
      if (body.{field} === undefined) return json(422, {{ error: "{field} is required" }});
      const newId = String(store.size + 1);
      store.set(newId, {{ id: newId, ...body }});
      return json(201, store.get(newId));
    }}
    default:
      return json(405, {{ error: `${{event.httpMethod}} not allowed` }});
  }}
}};
'''})
add("web-handler", "node", {
    "handler.js": '''const express = require("express");
const serverless = require("serverless-http");

const app = express();
app.use(express.json({ limit: "100kb" }));

const notes = [];
app.get("/notes", (req, res) => res.json(notes));
app.post("/notes", (req, res) => {
  if (typeof req.body.text !== "string") return res.status(400).json({ error: "text required" });
  const note = { id: notes.length + 1, text: req.body.text.slice(0, 500) };
  notes.push(note);
  res.status(201).json(note);
});

module.exports.handler = serverless(app);
''',
    "package.json": json.dumps({"name": "notes-api", "version": "1.2.0", "main": "handler.js", "dependencies": {"express": "^4.19.2", "serverless-http": "^3.2.0"}, "scripts": {"test": "node --test"}}, indent=2),
})
add("web-handler", "node", {"handler.mjs": '''export async function handler(event) {
  const url = new URL(event.rawPath || "/", "https://fn.local");
  const name = url.searchParams.get("name") || "world";
  return {
    statusCode: 200,
    headers: { "content-type": "text/plain; charset=utf-8" },
    body: `Hello, ${name.slice(0, 50)}!`,
  };
}
'''})
add("web-handler", "node", {"handler.js": '''const ALLOWED_ORIGINS = (process.env.ALLOWED_ORIGINS || "").split(",");

exports.handler = async (event) => {
  const origin = event.headers && event.headers.origin;
  const headers = { Vary: "Origin" };
  if (ALLOWED_ORIGINS.includes(origin)) {
    headers["Access-Control-Allow-Origin"] = origin;
    headers["Access-Control-Allow-Methods"] = "GET,POST,OPTIONS";
  }
  if (event.httpMethod === "OPTIONS") return { statusCode: 204, headers };
  return { statusCode: 200, headers, body: JSON.stringify({ ok: true }) };
};
'''})

# ---------------------------------------------------------------- node: db clients
add("db-client", "node", {"handler.js": '''const { Pool } = require("pg");

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 2 });

exports.handler = async (event) => {
  const limit = Math.min(Number(event.limit) || 20, 100);
  const { rows } = await pool.query("SELECT id, email, created_at FROM users ORDER BY created_at DESC LIMIT $1", [limit]);
  return { users: rows };
};
''', "package.json": json.dumps({"name": "users-fn", "dependencies": {"pg": "^8.12.0"}}, indent=2)})
add("db-client", "node", {"handler.js": '''const { createClient } = require("redis");

let client;
async function redis() {
  if (!client) {
    client = createClient({ url: process.env.REDIS_URL });
    await client.connect();
  }
  return client;
}

exports.handler = async (event) => {
  const r = await redis();
  const key = `views:${event.page}`;
  const views = await r.incr(key);
  return { page: event.page, views };
};
''', "package.json": json.dumps({"name": "counter", "dependencies": {"redis": "^4.6.15"}}, indent=2)})
add("db-client", "node", {"handler.js": '''const { DynamoDBClient } = require("@aws-sdk/client-dynamodb");
const { DynamoDBDocumentClient, GetCommand, PutCommand } = require("@aws-sdk/lib-dynamodb");

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const TableName = process.env.TABLE_NAME;

exports.handler = async (event) => {
  if (event.httpMethod === "PUT") {
    const item = JSON.parse(event.body);
    await doc.send(new PutCommand({ TableName, Item: { pk: `PROFILE#${item.id}`, ...item } }));
    return { statusCode: 204 };
  }
  const { Item } = await doc.send(new GetCommand({ TableName, Key: { pk: `PROFILE#${event.pathParameters.id}` } }));
  return Item ? { statusCode: 200, body: JSON.stringify(Item) } : { statusCode: 404 };
};
''', "package.json": json.dumps({"name": "profiles", "dependencies": {"@aws-sdk/client-dynamodb": "^3.600.0", "@aws-sdk/lib-dynamodb": "^3.600.0"}}, indent=2)})
add("db-client", "node", {"handler.js": '''const { MongoClient } = require("mongodb");

const client = new MongoClient(process.env.MONGO_URI);

exports.handler = async (event) => {
  await client.connect();
  const events = client.db("analytics").collection("events");
  const top = await events.aggregate([
    { $match: { type: event.type || "pageview" } },
    { $group: { _id: "$path", hits: { $sum: 1 } } },
    { $sort: { hits: -1 } },
    { $limit: 10 },
  ]).toArray();
  return top;
};
''', "package.json": json.dumps({"name": "analytics", "dependencies": {"mongodb": "^6.8.0"}}, indent=2)})
add("db-client", "node", {"handler.js": '''const Database = require("better-sqlite3");

const db = new Database(process.env.DB_PATH || "/tmp/app.db");
db.exec("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT)");
const put = db.prepare("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)");
const get = db.prepare("SELECT v FROM kv WHERE k = ?");

exports.handler = async (event) => {
  if (event.value !== undefined) put.run(event.key, JSON.stringify(event.value));
  const row = get.get(event.key);
  return { key: event.key, value: row ? JSON.parse(row.v) : null };
};
''', "package.json": json.dumps({"name": "kv", "dependencies": {"better-sqlite3": "^11.1.2"}}, indent=2)})

# ---------------------------------------------------------------- node: http api clients
for name, url in [("weather", "https://api.open-meteo.com/v1/forecast?latitude=${event.lat}&longitude=${event.lon}&current_weather=true"),
                  ("github", "https://api.github.com/repos/${event.owner}/${event.repo}/releases/latest"),
                  ("exchange", "https://api.frankfurter.app/latest?from=${event.base || 'EUR'}"),
                  ("jokes", "https://official-joke-api.appspot.com/random_joke")]:
    add("http-api", "node", {"handler.js": f'''const TIMEOUT_MS = Number(process.env.HTTP_TIMEOUT_MS || 5000);

exports.handler = async (event) => {{
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
  try {{
    const res = await fetch(`{url}`, {{ signal: controller.signal, headers: {{ accept: "application/json" }} }});
    if (!res.ok) return {{ statusCode: 502, body: `upstream ${{res.status}}` }};
    return {{ statusCode: 200, body: JSON.stringify({{ source: "{name}", data: await res.json() }}) }};
  }} finally {{
    clearTimeout(timer);
  }}
}};
'''})
add("http-api", "node", {"handler.js": '''const axios = require("axios");

const api = axios.create({
  baseURL: "https://api.sendgrid.com/v3",
  headers: { Authorization: `Bearer ${process.env.SENDGRID_API_KEY}` },
  timeout: 5000,
});

exports.handler = async (event) => {
  await api.post("/mail/send", {
    personalizations: [{ to: [{ email: event.to }] }],
    from: { email: process.env.MAIL_FROM },
    subject: event.subject,
    content: [{ type: "text/plain", value: event.text }],
  });
  return { sent: true };
};
''', "package.json": json.dumps({"name": "mailer", "dependencies": {"axios": "^1.7.2"}}, indent=2)})
add("http-api", "node", {"handler.js": '''const https = require("https");

function postJson(url, body, token) {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` } }, (res) => {
      let data = "";
      res.on("data", (c) => (data += c));
      res.on("end", () => resolve({ status: res.statusCode, body: data }));
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

exports.handler = async (event) => {
  const res = await postJson("https://slack.com/api/chat.postMessage", { channel: event.channel, text: event.text }, process.env.SLACK_BOT_TOKEN);
  return JSON.parse(res.body);
};
'''})
add("http-api", "node", {"handler.js": '''const Stripe = require("stripe");

const stripe = Stripe(process.env.STRIPE_SECRET_KEY);

exports.handler = async (event) => {
  const sig = event.headers["stripe-signature"];
  const evt = stripe.webhooks.constructEvent(event.body, sig, process.env.STRIPE_WEBHOOK_SECRET);
  if (evt.type === "checkout.session.completed") {
    console.log("paid", evt.data.object.id);
  }
  return { statusCode: 200 };
};
''', "package.json": json.dumps({"name": "stripe-hook", "dependencies": {"stripe": "^16.2.0"}}, indent=2)})

# ---------------------------------------------------------------- node: image
for op, code in [("resize", ".resize(Number(event.width) || 256)"), ("grayscale", ".grayscale()"),
                 ("rotate", ".rotate(Number(event.degrees) || 90)"), ("blur", ".blur(Number(event.sigma) || 2)")]:
    add("image", "node", {
        "handler.js": f'''const sharp = require("sharp");

exports.handler = async (event) => {{
  const input = Buffer.from(event.imageBase64, "base64");
  const output = await sharp(input){code}.png().toBuffer();
  return {{ op: "{op}", imageBase64: output.toString("base64") }};
}};
''',
        "package.json": json.dumps({"name": f"img-{op}", "version": "1.0.0", "dependencies": {"sharp": "^0.33.4"}}, indent=2),
    })
add("image", "node", {"handler.js": '''const PIXEL = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==";

exports.handler = async (event) => {
  console.log(JSON.stringify({ open: event.queryStringParameters && event.queryStringParameters.m }));
  return { statusCode: 200, headers: { "content-type": "image/gif" }, body: PIXEL, isBase64Encoded: true };
};
'''})
add("image", "node", {"handler.js": '''const { execFile } = require("child_process");
const { promisify } = require("util");
const fs = require("fs/promises");
const os = require("os");
const path = require("path");

const run = promisify(execFile);

exports.handler = async (event) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "img-"));
  const src = path.join(dir, "in.jpg");
  const dst = path.join(dir, "out.webp");
  await fs.writeFile(src, Buffer.from(event.body, "base64"));
  await run("convert", [src, "-resize", "800x800>", dst], { timeout: 20000 });
  const out = await fs.readFile(dst);
  await fs.rm(dir, { recursive: true, force: true });
  return { statusCode: 200, body: out.toString("base64"), isBase64Encoded: true };
};
'''})

# ---------------------------------------------------------------- node: text
add("text", "node", {"handler.js": '''const STOP = new Set(["the", "a", "an", "and", "or", "of", "to", "in", "is", "it"]);

exports.handler = async (event) => {
  const words = (event.text || "").toLowerCase().match(/[a-z']+/g) || [];
  const counts = {};
  for (const w of words) if (!STOP.has(w) && w.length > 2) counts[w] = (counts[w] || 0) + 1;
  const top = Object.entries(counts).sort((a, b) => b[1] - a[1]).slice(0, 10);
  return { words: words.length, top };
};
'''})
add("text", "node", {"handler.js": '''const slugify = (s) =>
  s.normalize("NFKD").replace(/[\\u0300-\\u036f]/g, "").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");

exports.handler = async (event) => ({ slug: slugify(event.title || "") });
'''})
add("text", "node", {"handler.js": '''const { marked } = require("marked");
const sanitizeHtml = require("sanitize-html");

exports.handler = async (event) => {
  const html = sanitizeHtml(marked.parse(event.markdown || ""), { allowedTags: sanitizeHtml.defaults.allowedTags.concat(["h1", "h2"]) });
  return { statusCode: 200, headers: { "content-type": "text/html" }, body: html };
};
''', "package.json": json.dumps({"name": "md", "dependencies": {"marked": "^13.0.2", "sanitize-html": "^2.13.0"}}, indent=2)})
add("text", "node", {"handler.js": '''const { parse } = require("csv-parse/sync");

exports.handler = async (event) => {
  const rows = parse(event.csv, { columns: true, skip_empty_lines: true });
  const col = event.column || "value";
  const values = rows.map((r) => Number(r[col])).filter((v) => !Number.isNaN(v));
  const mean = values.reduce((a, b) => a + b, 0) / (values.length || 1);
  return { count: values.length, mean };
};
''', "package.json": json.dumps({"name": "csvstats", "dependencies": {"csv-parse": "^5.5.6"}}, indent=2)})
add("text", "node", {"handler.js": '''const EMAIL = /[\\w.+-]+@[\\w-]+\\.[\\w.-]+/g;
const PHONE = /\\+?\\d[\\d\\s().-]{7,}\\d/g;

exports.handler = async (event) => ({
  text: String(event.text || "").replace(EMAIL, "[email]").replace(PHONE, "[phone]"),
});
'''})
add("text", "node", {"handler.js": '''function caesar(text, shift) {
  return text.replace(/[a-z]/gi, (ch) => {
    const base = ch <= "Z" ? 65 : 97;
    return String.fromCharCode(((ch.charCodeAt(0) - base + shift + 26) % 26) + base);
  });
}

exports.handler = async (event) => ({
  encoded: caesar(event.text || "", Number(event.shift) || 3),
  reversed: (event.text || "").split("").reverse().join(""),
  letters: Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i)).join(""),
});
'''})
add("text", "node", {"handler.js": '''const Diff = require("diff");

exports.handler = async (event) => {
  const patch = Diff.createTwoFilesPatch("before", "after", event.before || "", event.after || "");
  return { patch };
};
''', "package.json": json.dumps({"name": "differ", "dependencies": {"diff": "^5.2.0"}}, indent=2)})

# ---------------------------------------------------------------- node: subprocess
add("subprocess", "node", {"handler.js": '''const { execFile } = require("child_process");

exports.handler = (event, context, callback) => {
  execFile("ffprobe", ["-v", "error", "-show_format", "-of", "json", event.url], { timeout: 15000 }, (err, stdout, stderr) => {
    if (err) return callback(null, { statusCode: 500, body: stderr.slice(-500) });
    callback(null, { statusCode: 200, body: stdout });
  });
};
'''})
add("subprocess", "node", {"handler.js": '''const { spawnSync } = require("child_process");

exports.handler = async (event) => {
  const res = spawnSync("pandoc", ["-f", "markdown", "-t", "html"], { input: event.markdown, encoding: "utf8", timeout: 10000 });
  if (res.status !== 0) return { statusCode: 500, body: res.stderr };
  return { statusCode: 200, headers: { "content-type": "text/html" }, body: res.stdout };
};
'''})
add("subprocess", "node", {"handler.js": '''const { spawn } = require("child_process");

exports.handler = async (event) =>
  new Promise((resolve, reject) => {
    const gz = spawn("gzip", ["-c", "-9"], { env: { ...process.env, LC_ALL: "C" } });
    const chunks = [];
    gz.stdout.on("data", (c) => chunks.push(c));
    gz.on("error", reject);
    gz.on("close", (code) => resolve({ code, body: Buffer.concat(chunks).toString("base64") }));
    gz.stdin.end(Buffer.from(event.data || "", "utf8"));
  });
'''})

# ---------------------------------------------------------------- node: base64 & encoding
add("base64", "node", {"handler.js": '''exports.handler = async (event) => {
  const body = event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body;
  const payload = JSON.parse(body || "{}");
  return { statusCode: 200, body: JSON.stringify({ keys: Object.keys(payload).sort() }) };
};
'''})
add("base64", "node", {"handler.js": '''const b64url = (s) => Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("utf8");

exports.handler = async (event) => {
  // debugging aid: show unverified JWT claims
  const token = (event.headers.authorization || "").replace(/^Bearer /, "");
  const [header, claims] = token.split(".");
  return { header: JSON.parse(b64url(header)), claims: JSON.parse(b64url(claims)) };
};
'''})
add("base64", "node", {"handler.js": '''const zlib = require("zlib");

exports.handler = async (event) => {
  const payload = JSON.parse(zlib.gunzipSync(Buffer.from(event.awslogs.data, "base64")).toString("utf8"));
  const errors = payload.logEvents.filter((e) => e.message.includes("ERROR")).map((e) => e.message);
  return { group: payload.logGroup, errors: errors.slice(0, 50) };
};
'''})
add("base64", "node", {"handler.js": '''exports.handler = async (event) => {
  const raw = Buffer.from(event.data || "", "base64");
  return { bytes: raw.length, hex: raw.subarray(0, 32).toString("hex"), base64url: raw.toString("base64url") };
};
'''})

# ---------------------------------------------------------------- node: dynamic without eval
add("dynamic-dispatch", "node", {
    "handler.js": '''const path = require("path");

const ACTIONS = new Set(["resize", "stats"]);

exports.handler = async (event) => {
  if (!ACTIONS.has(event.action)) return { error: `unknown action ${event.action}` };
  const mod = require(path.join(__dirname, "actions", `${event.action}.js`));
  return mod.run(event.args || {});
};
''',
    "actions/resize.js": "exports.run = (a) => ({ w: Math.round((a.w || 100) / 2), h: Math.round((a.h || 100) / 2) });\n",
    "actions/stats.js": "exports.run = (a) => { const xs = a.xs || [0]; return { mean: xs.reduce((s, x) => s + x, 0) / xs.length }; };\n",
})
add("dynamic-dispatch", "node", {"handler.js": '''class Calculator {
  add(a, b) { return a + b; }
  sub(a, b) { return a - b; }
  mul(a, b) { return a * b; }
}

exports.handler = async (event) => {
  const calc = new Calculator();
  const op = event.op;
  if (!Object.getOwnPropertyNames(Calculator.prototype).includes(op) || op === "constructor") {
    return { error: "unsupported" };
  }
  return { result: calc[op](Number(event.a), Number(event.b)) };
};
'''})
add("dynamic-dispatch", "node", {"handler.js": '''const routes = {
  "GET /ping": async () => ({ pong: true }),
  "POST /sum": async (body) => ({ sum: (body.values || []).reduce((a, b) => a + b, 0) }),
};

exports.handler = async (event) => {
  const route = routes[`${event.httpMethod} ${event.path}`];
  if (!route) return { statusCode: 404 };
  return { statusCode: 200, body: JSON.stringify(await route(JSON.parse(event.body || "{}"))) };
};
'''})
add("dynamic-dispatch", "node", {"handler.js": '''const plugins = {};
for (const name of (process.env.PLUGINS || "").split(",").filter(Boolean)) {
  plugins[name] = require(`./plugins/${name}`);
}

exports.handler = async (event) => {
  const results = {};
  for (const [name, plugin] of Object.entries(plugins)) results[name] = await plugin(event);
  return results;
};
''', "plugins/noop.js": "module.exports = async () => null;\n"})

# ---------------------------------------------------------------- node: templating, validation, crypto, misc
add("templating", "node", {"handler.js": '''const Handlebars = require("handlebars");

const receipt = Handlebars.compile("<h1>Receipt {{number}}</h1><ul>{{#each lines}}<li>{{name}}: {{price}}</li>{{/each}}</ul>");

exports.handler = async (event) => ({
  statusCode: 200,
  headers: { "content-type": "text/html" },
  body: receipt({ number: event.number, lines: event.lines || [] }),
});
''', "package.json": json.dumps({"name": "receipts", "dependencies": {"handlebars": "^4.7.8"}}, indent=2)})
add("templating", "node", {"handler.js": '''const escape = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

exports.handler = async (event) => {
  const items = (event.items || []).map((i) => `<li>${escape(i.name)} &times; ${Number(i.qty)}</li>`).join("");
  return { statusCode: 200, headers: { "content-type": "text/html" }, body: `<h1>Hello ${escape(event.name)}</h1><ul>${items}</ul>` };
};
'''})
add("validation", "node", {"handler.js": '''const Ajv = require("ajv");

const ajv = new Ajv({ allErrors: true });
const validate = ajv.compile({
  type: "object",
  required: ["name", "quantity"],
  properties: { name: { type: "string", maxLength: 100 }, quantity: { type: "integer", minimum: 1 } },
  additionalProperties: false,
});

exports.handler = async (event) => {
  const ok = validate(event);
  return { ok, errors: ok ? [] : validate.errors.map((e) => `${e.instancePath} ${e.message}`) };
};
''', "package.json": json.dumps({"name": "validator", "dependencies": {"ajv": "^8.17.1"}}, indent=2)})
add("validation", "node", {"handler.js": '''const { z } = require("zod");

const Signup = z.object({
  email: z.string().email(),
  password: z.string().min(12),
  age: z.number().int().min(13).optional(),
});

exports.handler = async (event) => {
  const result = Signup.safeParse(JSON.parse(event.body || "{}"));
  if (!result.success) return { statusCode: 422, body: JSON.stringify(result.error.flatten()) };
  return { statusCode: 201, body: JSON.stringify({ email: result.data.email }) };
};
''', "package.json": json.dumps({"name": "signup", "dependencies": {"zod": "^3.23.8"}}, indent=2)})
add("crypto-hash", "node", {"handler.js": '''const crypto = require("crypto");

exports.handler = async (event) => {
  const ts = event.headers["x-signature-timestamp"];
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return { statusCode: 401 };
  const expected = crypto.createHmac("sha256", process.env.WEBHOOK_SECRET).update(`${ts}.${event.body}`).digest("hex");
  const given = Buffer.from(event.headers["x-signature"] || "", "utf8");
  const ok = given.length === expected.length && crypto.timingSafeEqual(given, Buffer.from(expected, "utf8"));
  return { statusCode: ok ? 204 : 401 };
};
'''})
add("crypto-hash", "node", {"handler.js": '''const crypto = require("crypto");

const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

exports.handler = async (event) => {
  const data = Buffer.from(event.file || "", "base64");
  const sha256 = crypto.createHash("sha256").update(data).digest("hex");
  return { sha256, empty: sha256 === EMPTY_SHA256, id: crypto.randomUUID() };
};
'''})
add("crypto-hash", "node", {"handler.js": '''const crypto = require("crypto");

const KEY = Buffer.from(process.env.AES_KEY_HEX, "hex");

exports.handler = async (event) => {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", KEY, iv);
  const ct = Buffer.concat([cipher.update(String(event.plaintext), "utf8"), cipher.final()]);
  return { token: Buffer.concat([iv, cipher.getAuthTag(), ct]).toString("base64url") };
};
'''})
add("crypto-hash", "node", {"handler.js": '''const bcrypt = require("bcryptjs");

exports.handler = async (event) => {
  if (event.hash) return { match: await bcrypt.compare(event.password, event.hash) };
  return { hash: await bcrypt.hash(event.password, 12) };
};
''', "package.json": json.dumps({"name": "pw", "dependencies": {"bcryptjs": "^2.4.3"}}, indent=2)})
add("queue", "node", {"handler.js": '''const { SQSClient, SendMessageCommand } = require("@aws-sdk/client-sqs");

const sqs = new SQSClient({});

exports.handler = async (event) => {
  const failures = [];
  for (const record of event.Records || []) {
    try {
      const msg = JSON.parse(record.body);
      await sqs.send(new SendMessageCommand({ QueueUrl: process.env.QUEUE_URL, MessageBody: JSON.stringify({ id: msg.id, status: "processed" }) }));
    } catch (e) {
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
};
''', "package.json": json.dumps({"name": "relay", "dependencies": {"@aws-sdk/client-sqs": "^3.600.0"}}, indent=2)})
add("s3", "node", {"handler.js": '''const { S3Client, GetObjectCommand, PutObjectCommand } = require("@aws-sdk/client-s3");

const s3 = new S3Client({});

exports.handler = async (event) => {
  for (const rec of event.Records) {
    const Bucket = rec.s3.bucket.name;
    const Key = decodeURIComponent(rec.s3.object.key.replace(/\\+/g, " "));
    const obj = await s3.send(new GetObjectCommand({ Bucket, Key }));
    const text = await obj.Body.transformToString();
    await s3.send(new PutObjectCommand({ Bucket, Key: `${Key}.lines`, Body: String(text.split("\\n").length) }));
  }
  return { ok: true };
};
''', "package.json": json.dumps({"name": "s3-lines", "dependencies": {"@aws-sdk/client-s3": "^3.600.0"}}, indent=2)})
add("socket-client", "node", {"handler.js": '''const net = require("net");

exports.handler = async () =>
  new Promise((resolve) => {
    const socket = net.connect(Number(process.env.SMTP_PORT || 25), process.env.SMTP_HOST);
    socket.setTimeout(3000);
    socket.once("data", (d) => {
      socket.end("QUIT\\r\\n");
      resolve({ reachable: true, banner: d.toString().trim() });
    });
    socket.once("timeout", () => { socket.destroy(); resolve({ reachable: false }); });
    socket.once("error", () => resolve({ reachable: false }));
  });
'''})
add("workers", "node", {"handler.js": '''const { Worker } = require("worker_threads");
const path = require("path");

const MAX = Number(process.env.MAX_WORKERS || 2);

exports.handler = async (event) => {
  const chunks = event.numbers.reduce((acc, n, i) => { (acc[i % MAX] ||= []).push(n); return acc; }, []);
  const results = await Promise.all(chunks.map((chunk) => new Promise((resolve, reject) => {
    const w = new Worker(path.join(__dirname, "sum.js"), { workerData: chunk });
    w.once("message", resolve);
    w.once("error", reject);
  })));
  return { sum: results.reduce((a, b) => a + b, 0) };
};
''', "sum.js": '''const { parentPort, workerData } = require("worker_threads");
parentPort.postMessage(workerData.reduce((a, b) => a + b, 0));
'''})
add("llm-app", "node", {"handler.js": '''const OpenAI = require("openai");

const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY });
const SYSTEM = "You are a helpful assistant. Classify the sentiment of the review as positive, neutral or negative.";
// phrases we refuse to forward, a cheap input filter
const BLOCKED = ["ignore previous instructions", "system prompt"];

exports.handler = async (event) => {
  const text = String(event.review || "").slice(0, 4000);
  if (BLOCKED.some((p) => text.toLowerCase().includes(p))) return { error: "rejected input" };
  const r = await client.chat.completions.create({
    model: process.env.MODEL || "gpt-4o-mini",
    messages: [{ role: "system", content: SYSTEM }, { role: "user", content: text }],
  });
  return { sentiment: r.choices[0].message.content.trim() };
};
''', "package.json": json.dumps({"name": "sentiment", "dependencies": {"openai": "^4.52.0"}}, indent=2)})
add("cron", "node", {"handler.js": '''exports.handler = async () => {
  const since = new Date(Date.now() - 24 * 3600 * 1000).toISOString();
  const res = await fetch(`${process.env.METRICS_URL}?since=${encodeURIComponent(since)}`);
  const data = await res.json();
  const summary = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.reduce((a, b) => a + b, 0)]));
  console.log("daily summary", summary);
  return summary;
};
'''})
add("config", "node", {"handler.js": '''const REQUIRED = ["DATABASE_URL", "API_KEY"];

exports.handler = async () => {
  const missing = REQUIRED.filter((name) => !process.env[name]);
  const region = process.env.AWS_REGION || "eu-west-1";
  return { ready: missing.length === 0, missing, region, nodeVersion: process.version };
};
'''})
add("typescript", "node", {"handler.ts": '''interface Order {
  id: string;
  lines: { sku: string; qty: number; price: number }[];
}

export const handler = async (event: { body: string }): Promise<{ statusCode: number; body: string }> => {
  const order: Order = JSON.parse(event.body);
  const total = order.lines.reduce((sum, l) => sum + l.qty * l.price, 0);
  return { statusCode: 200, body: JSON.stringify({ id: order.id, total: Math.round(total * 100) / 100 }) };
};
''', "package.json": json.dumps({"name": "orders-ts", "devDependencies": {"typescript": "~5.5.0", "@types/node": "^20.14.0"}, "scripts": {"build": "tsc"}}, indent=2)})
add("esm", "node", {"handler.mjs": '''import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const countries = JSON.parse(await readFile(path.join(here, "countries.json"), "utf8"));

export async function handler(event) {
  const code = String(event.code || "").toUpperCase();
  return countries[code] ? { code, name: countries[code] } : { statusCode: 404 };
}
''', "countries.json": json.dumps({"DE": "Germany", "FR": "France", "NL": "Netherlands", "ES": "Spain"}, indent=2)})
add("emoji", "node", {"handler.js": '''const REACTIONS = {
  love: "\u2764\ufe0f",
  family: "\U0001f468\u200d\U0001f469\u200d\U0001f467",
  party: "\U0001f389",
  flag: "\U0001f3f3\ufe0f\u200d\U0001f308",
};

exports.handler = async (event) => ({ reaction: REACTIONS[event.kind] || "\U0001f44d" });
'''})
add("i18n", "python", {"handler.py": '''GREETINGS = {
    "de": "Grüß Gott",
    "fa": "سلام\u200cعلیکم",
    "ja": "こんにちは",
    "ar": "مرحبا",
    "hi": "नमस्ते",
}


def handle(event, context=None):
    lang = event.get("lang", "en")
    return {"greeting": GREETINGS.get(lang, "Hello"), "rtl": lang in {"ar", "fa", "he"}}
'''})


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    counters = {}
    for kind, runtime, files in SAMPLES:
        counters[kind] = counters.get(kind, 0) + 1
        d = OUT / f"{kind}-{counters[kind]:02d}"
        for name, text in files.items():
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_text(text, encoding="utf-8")
        (d / "meta.json").write_text(json.dumps({"runtime": runtime, "category": kind, "expect": "allow"}) + "\n")
    print(len(SAMPLES), "benign samples")


main()
