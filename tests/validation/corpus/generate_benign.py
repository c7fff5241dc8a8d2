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


# ---------------------------------------------------------------- python: web handlers
add("web-handler", "python", {"handler.py": r'''"""Receives GitHub webhooks for the deploy bot and acknowledges push / PR events."""
import hashlib
import hmac
import json
import logging
import os

log = logging.getLogger(__name__)
SECRET = os.environ["GITHUB_WEBHOOK_SECRET"].encode()
WATCHED_BRANCHES = {"main", "release"}


def _verify(body: bytes, signature: str | None) -> bool:
    if not signature or not signature.startswith("sha256="):
        return False
    expected = hmac.new(SECRET, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature.removeprefix("sha256="))


def handle(event, context=None):
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    body = (event.get("body") or "").encode()
    if not _verify(body, headers.get("x-hub-signature-256")):
        return {"statusCode": 401, "body": "bad signature"}

    kind = headers.get("x-github-event", "")
    payload = json.loads(body)
    if kind == "ping":
        return {"statusCode": 200, "body": "pong"}
    if kind == "push":
        branch = payload["ref"].rsplit("/", 1)[-1]
        if branch not in WATCHED_BRANCHES:
            return {"statusCode": 204}
        log.info("push to %s by %s (%d commits)", branch, payload["pusher"]["name"], len(payload["commits"]))
        return {"statusCode": 202, "body": json.dumps({"queued": payload["after"]})}
    if kind == "pull_request" and payload.get("action") in ("opened", "synchronize"):
        pr = payload["pull_request"]
        return {"statusCode": 202, "body": json.dumps({"preview_for": pr["number"], "head": pr["head"]["sha"]})}
    return {"statusCode": 204}
'''})
add("web-handler", "python", {"handler.py": r'''import base64
import json
import os

from sqlalchemy import create_engine, text

engine = create_engine(os.environ["DATABASE_URL"], pool_pre_ping=True, pool_size=2)
PAGE_MAX = 100


def _encode_cursor(created_at, row_id):
    raw = json.dumps([created_at.isoformat(), row_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor):
    padded = cursor + "=" * (-len(cursor) % 4)
    created_at, row_id = json.loads(base64.urlsafe_b64decode(padded))
    return created_at, row_id


def handle(event, context=None):
    qs = event.get("queryStringParameters") or {}
    try:
        limit = max(1, min(int(qs.get("limit", 25)), PAGE_MAX))
    except ValueError:
        return {"statusCode": 400, "body": json.dumps({"error": "limit must be an integer"})}

    sql = "SELECT id, title, created_at FROM articles"
    params = {"limit": limit + 1}
    if qs.get("cursor"):
        try:
            params["ts"], params["id"] = _decode_cursor(qs["cursor"])
        except (ValueError, TypeError):
            return {"statusCode": 400, "body": json.dumps({"error": "bad cursor"})}
        sql += " WHERE (created_at, id) < (:ts, :id)"
    sql += " ORDER BY created_at DESC, id DESC LIMIT :limit"

    with engine.connect() as conn:
        rows = conn.execute(text(sql), params).mappings().all()

    page, more = rows[:limit], len(rows) > limit
    body = {
        "items": [{"id": r["id"], "title": r["title"], "created_at": r["created_at"].isoformat()} for r in page],
        "next_cursor": _encode_cursor(page[-1]["created_at"], page[-1]["id"]) if more else None,
    }
    return {"statusCode": 200, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}
''', "requirements.txt": "SQLAlchemy==2.0.31\npsycopg2-binary==2.9.9\n"})
add("web-handler", "python", {"handler.py": r'''import csv
import datetime as dt
import io
import os

import boto3
from boto3.dynamodb.conditions import Key

table = boto3.resource("dynamodb").Table(os.environ.get("ORDERS_TABLE", "orders"))
COLUMNS = ["order_id", "customer", "status", "total", "currency", "created_at"]


def _orders_for(tenant, since):
    kwargs = {"KeyConditionExpression": Key("tenant").eq(tenant) & Key("created_at").gte(since)}
    while True:
        page = table.query(**kwargs)
        yield from page["Items"]
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def handle(event, context=None):
    params = event.get("queryStringParameters") or {}
    tenant = (event.get("requestContext", {}).get("authorizer") or {}).get("tenant")
    if not tenant:
        return {"statusCode": 403, "body": "no tenant"}
    days = int(params.get("days", "30"))
    since = (dt.date.today() - dt.timedelta(days=days)).isoformat()

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for order in _orders_for(tenant, since):
        order["total"] = f"{order.get('total', 0):.2f}"
        writer.writerow(order)

    filename = f"orders-{tenant}-{dt.date.today():%Y%m%d}.csv"
    return {
        "statusCode": 200,
        "headers": {
            "content-type": "text/csv; charset=utf-8",
            "content-disposition": f'attachment; filename="{filename}"',
        },
        "body": buf.getvalue(),
    }
'''})
add("web-handler", "python", {"handler.py": r'''import functools
import json
import os

import jwt
from jwt import PyJWKClient

ISSUER = os.environ["OIDC_ISSUER"].rstrip("/")
AUDIENCE = os.environ.get("OIDC_AUDIENCE", "api://projects")
jwks = PyJWKClient(f"{ISSUER}/.well-known/jwks.json", cache_keys=True)


class Unauthorized(Exception):
    pass


def require_scope(scope):
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(event, context=None):
            auth = (event.get("headers") or {}).get("authorization", "")
            if not auth.lower().startswith("bearer "):
                return {"statusCode": 401, "body": "missing token"}
            token = auth.split(" ", 1)[1]
            try:
                key = jwks.get_signing_key_from_jwt(token)
                claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=AUDIENCE, issuer=ISSUER)
            except jwt.ExpiredSignatureError:
                return {"statusCode": 401, "body": "token expired"}
            except jwt.InvalidTokenError as exc:
                return {"statusCode": 401, "body": f"invalid token: {exc}"}
            if scope not in claims.get("scope", "").split():
                return {"statusCode": 403, "body": f"needs scope {scope}"}
            event["claims"] = claims
            return fn(event, context)
        return wrapper
    return decorator


@require_scope("projects:read")
def handle(event, context=None):
    user = event["claims"]["sub"]
    return {"statusCode": 200, "body": json.dumps({"user": user, "projects": []})}
''', "requirements.txt": "PyJWT[crypto]==2.8.0\n"})
add("web-handler", "python", {"handler.py": r'''import os
import smtplib
from email.message import EmailMessage
from urllib.parse import parse_qs

SMTP_HOST = os.environ.get("SMTP_HOST", "smtp.eu.mailgun.org")
SMTP_USER = os.environ["SMTP_USER"]
SMTP_PASSWORD = os.environ["SMTP_PASSWORD"]
INBOX = os.environ.get("CONTACT_INBOX", "hello@example.com")


def _field(form, name, limit):
    return (form.get(name, [""])[0]).strip()[:limit]


def handle(event, context=None):
    if event.get("httpMethod") != "POST":
        return {"statusCode": 405, "headers": {"allow": "POST"}}
    form = parse_qs(event.get("body") or "")
    if _field(form, "website", 100):  # honeypot: real people leave it empty
        return {"statusCode": 303, "headers": {"location": "/thanks"}}

    name, email, message = _field(form, "name", 100), _field(form, "email", 200), _field(form, "message", 5000)
    errors = [f for f, v in (("name", name), ("email", email), ("message", message)) if not v]
    if "@" not in email:
        errors.append("email")
    if errors:
        return {"statusCode": 303, "headers": {"location": "/contact?missing=" + ",".join(sorted(set(errors)))}}

    msg = EmailMessage()
    msg["Subject"] = f"Contact form: {name}"
    msg["From"] = f"Website <{SMTP_USER}>"
    msg["To"] = INBOX
    msg["Reply-To"] = email
    msg.set_content(message)
    with smtplib.SMTP(SMTP_HOST, 587, timeout=10) as smtp:
        smtp.starttls()
        smtp.login(SMTP_USER, SMTP_PASSWORD)
        smtp.send_message(msg)
    return {"statusCode": 303, "headers": {"location": "/thanks"}}
'''})

add("web-handler", "python", {"handler.py": r'''"""Feature-flag evaluation endpoint used by the web and mobile clients."""
import hashlib
import json
import os
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Flag:
    name: str
    enabled: bool = False
    rollout: int = 0  # percent of users, 0..100
    allow: frozenset = field(default_factory=frozenset)
    countries: frozenset = field(default_factory=frozenset)


def _load_flags():
    raw = json.loads(os.environ.get("FEATURE_FLAGS", "{}"))
    return {
        name: Flag(name, cfg.get("enabled", False), int(cfg.get("rollout", 0)),
                   frozenset(cfg.get("allow", [])), frozenset(cfg.get("countries", [])))
        for name, cfg in raw.items()
    }


FLAGS = _load_flags()


def _bucket(flag: str, user_id: str) -> int:
    digest = hashlib.sha1(f"{flag}:{user_id}".encode()).digest()
    return int.from_bytes(digest[:2], "big") % 100


def is_on(flag: Flag, user_id: str, country: str | None) -> bool:
    if not flag.enabled:
        return False
    if user_id in flag.allow:
        return True
    if flag.countries and country not in flag.countries:
        return False
    return _bucket(flag.name, user_id) < flag.rollout


def handle(event, context=None):
    user_id = event.get("user_id") or "anonymous"
    country = (event.get("headers") or {}).get("cloudfront-viewer-country")
    return {"flags": {name: is_on(flag, user_id, country) for name, flag in FLAGS.items()}}
'''})
add("web-handler", "python", {"handler.py": r'''import json
import os
import secrets
import time
from urllib.parse import urlparse

import boto3
from botocore.exceptions import ClientError

links = boto3.resource("dynamodb").Table(os.environ["LINKS_TABLE"])
BASE = os.environ.get("SHORT_BASE", "https://sho.rt")


def create(body):
    target = body.get("url", "")
    if urlparse(target).scheme not in ("http", "https"):
        return 400, {"error": "url must be http(s)"}
    for _ in range(5):
        code = secrets.token_urlsafe(5)
        try:
            links.put_item(
                Item={"code": code, "url": target, "created": int(time.time()), "hits": 0},
                ConditionExpression="attribute_not_exists(code)",
            )
            return 201, {"short": f"{BASE}/{code}"}
        except ClientError as err:
            if err.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
    return 503, {"error": "could not allocate a code, try again"}


def handle(event, context=None):
    if event.get("httpMethod") == "POST":
        status, body = create(json.loads(event.get("body") or "{}"))
        return {"statusCode": status, "body": json.dumps(body)}
    code = (event.get("pathParameters") or {}).get("code", "")
    item = links.update_item(
        Key={"code": code},
        UpdateExpression="ADD hits :one",
        ExpressionAttributeValues={":one": 1},
        ConditionExpression="attribute_exists(code)",
        ReturnValues="ALL_NEW",
    ) if code else None
    if not item:
        return {"statusCode": 404}
    return {"statusCode": 301, "headers": {"location": item["Attributes"]["url"]}}
'''})
add("web-handler", "python", {"handler.py": r'''"""/healthz and /readyz for the orders service; readiness pings its dependencies."""
import os
import time

import psycopg
import redis

DATABASE_URL = os.environ["DATABASE_URL"]
cache = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379/0"), socket_timeout=1)


def _timed(check):
    started = time.perf_counter()
    try:
        check()
        return {"ok": True, "ms": round((time.perf_counter() - started) * 1000, 1)}
    except Exception as exc:  # report any failure as not ready
        return {"ok": False, "error": type(exc).__name__}


def _postgres():
    with psycopg.connect(DATABASE_URL, connect_timeout=2) as conn:
        conn.execute("SELECT 1")


def handle(event, context=None):
    if event.get("path") == "/healthz":
        return {"statusCode": 200, "body": "ok"}
    checks = {"postgres": _timed(_postgres), "redis": _timed(cache.ping)}
    ready = all(c["ok"] for c in checks.values())
    return {"statusCode": 200 if ready else 503, "body": {"ready": ready, "checks": checks}}
''', "requirements.txt": "psycopg[binary]==3.2.1\nredis==5.0.7\n"})
add("web-handler", "python", {"handler.py": r'''"""OAuth2 authorization-code callback for the 'Sign in with Google' button."""
import json
import os
import secrets
from http.cookies import SimpleCookie

import requests

CLIENT_ID = os.environ["GOOGLE_CLIENT_ID"]
CLIENT_SECRET = os.environ["GOOGLE_CLIENT_SECRET"]
REDIRECT_URI = os.environ["OAUTH_REDIRECT_URI"]
TOKEN_URL = "https://oauth2.googleapis.com/token"
USERINFO_URL = "https://openidconnect.googleapis.com/v1/userinfo"


def _cookies(event):
    jar = SimpleCookie()
    jar.load((event.get("headers") or {}).get("cookie", ""))
    return {k: m.value for k, m in jar.items()}


def handle(event, context=None):
    qs = event.get("queryStringParameters") or {}
    if "error" in qs:
        return {"statusCode": 302, "headers": {"location": "/login?error=" + qs["error"]}}
    if not qs.get("state") or qs.get("state") != _cookies(event).get("oauth_state"):
        return {"statusCode": 400, "body": "state mismatch"}

    token = requests.post(TOKEN_URL, data={
        "code": qs["code"], "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
        "redirect_uri": REDIRECT_URI, "grant_type": "authorization_code",
    }, timeout=10)
    if token.status_code != 200:
        return {"statusCode": 502, "body": "token exchange failed"}
    access = token.json()["access_token"]
    profile = requests.get(USERINFO_URL, headers={"Authorization": f"Bearer {access}"}, timeout=10).json()

    session = secrets.token_urlsafe(32)
    # the session store is written by the sessions function; here we only hand out the cookie
    return {
        "statusCode": 302,
        "multiValueHeaders": {"set-cookie": [
            f"session={session}; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=86400",
            "oauth_state=; Max-Age=0; Path=/",
        ]},
        "headers": {"location": "/app", "x-user": json.dumps(profile.get("email"))},
    }
''', "requirements.txt": "requests==2.32.3\n"})

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
add("db-client", "python", {"handler.py": r'''import os
from datetime import datetime, timezone

from sqlalchemy import DateTime, String, create_engine, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


class Base(DeclarativeBase):
    pass


class Customer(Base):
    __tablename__ = "customers"
    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    plan: Mapped[str] = mapped_column(String(32), default="free")
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


engine = create_engine(os.environ["DATABASE_URL"], pool_size=1, max_overflow=0)


def handle(event, context=None):
    """Upsert a customer from the billing provider's 'customer.updated' payload."""
    data = event["data"]["object"]
    now = datetime.now(timezone.utc)
    stmt = insert(Customer).values(email=data["email"].lower(), name=data.get("name") or "", plan=data.get("plan", "free"), updated_at=now)
    stmt = stmt.on_conflict_do_update(
        index_elements=[Customer.email],
        set_={"name": stmt.excluded.name, "plan": stmt.excluded.plan, "updated_at": now},
    )
    with Session(engine) as session, session.begin():
        session.execute(stmt)
        customer = session.scalars(select(Customer).where(Customer.email == data["email"].lower())).one()
        return {"id": customer.id, "plan": customer.plan}
''', "requirements.txt": "SQLAlchemy==2.0.31\npsycopg2-binary==2.9.9\n"})
add("db-client", "python", {"handler.py": r'''import asyncio
import os
from decimal import Decimal

import asyncpg

_pool = None


class InsufficientFunds(Exception):
    pass


async def pool():
    global _pool
    if _pool is None:
        _pool = await asyncpg.create_pool(os.environ["DATABASE_URL"], min_size=1, max_size=4)
    return _pool


async def transfer(src: int, dst: int, amount: Decimal) -> dict:
    async with (await pool()).acquire() as conn:
        async with conn.transaction(isolation="repeatable_read"):
            # lock both rows in a fixed order so two opposite transfers cannot deadlock
            rows = await conn.fetch(
                "SELECT id, balance FROM accounts WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE",
                [src, dst],
            )
            balances = {r["id"]: r["balance"] for r in rows}
            if len(balances) != 2:
                raise LookupError("unknown account")
            if balances[src] < amount:
                raise InsufficientFunds(src)
            await conn.execute("UPDATE accounts SET balance = balance - $1 WHERE id = $2", amount, src)
            await conn.execute("UPDATE accounts SET balance = balance + $1 WHERE id = $2", amount, dst)
            ledger_id = await conn.fetchval(
                "INSERT INTO ledger (src, dst, amount) VALUES ($1, $2, $3) RETURNING id", src, dst, amount
            )
    return {"ledger_id": ledger_id}


def handle(event, context=None):
    try:
        return asyncio.run(transfer(int(event["from"]), int(event["to"]), Decimal(str(event["amount"]))))
    except InsufficientFunds:
        return {"error": "insufficient funds"}
    except LookupError:
        return {"error": "unknown account"}
''', "requirements.txt": "asyncpg==0.29.0\n"})
add("db-client", "python", {"handler.py": r'''import os
from datetime import datetime, timedelta, timezone

from pymongo import MongoClient

client = MongoClient(os.environ["MONGODB_URI"], serverSelectionTimeoutMS=3000)
orders = client.get_default_database()["orders"]


def handle(event, context=None):
    """Daily revenue per store for the dashboard chart."""
    days = int(event.get("days", 14))
    since = datetime.now(timezone.utc) - timedelta(days=days)
    pipeline = [
        {"$match": {"status": "paid", "paidAt": {"$gte": since}}},
        {"$group": {
            "_id": {"store": "$storeId", "day": {"$dateToString": {"format": "%Y-%m-%d", "date": "$paidAt"}}},
            "revenue": {"$sum": "$total"},
            "orders": {"$sum": 1},
        }},
        {"$sort": {"_id.day": 1}},
    ]
    series = {}
    for row in orders.aggregate(pipeline, allowDiskUse=False):
        store = series.setdefault(row["_id"]["store"], [])
        store.append({"day": row["_id"]["day"], "revenue": round(row["revenue"], 2), "orders": row["orders"]})
    return {"since": since.date().isoformat(), "stores": series}
''', "requirements.txt": "pymongo==4.8.0\n"})
add("db-client", "python", {"handler.py": r'''import json
import os

import pymysql
import pymysql.cursors


def _connect():
    return pymysql.connect(
        host=os.environ["MYSQL_HOST"],
        user=os.environ["MYSQL_USER"],
        password=os.environ["MYSQL_PASSWORD"],
        database=os.environ.get("MYSQL_DB", "audit"),
        cursorclass=pymysql.cursors.DictCursor,
        connect_timeout=5,
        autocommit=False,
    )


def handle(event, context=None):
    """Batch-insert audit entries delivered by the queue trigger (one SQS batch per call)."""
    entries = [json.loads(r["body"]) for r in event.get("Records", [])]
    if not entries:
        return {"inserted": 0}
    rows = [(e["actor"], e["action"], e.get("target"), json.dumps(e.get("details", {}))) for e in entries]
    conn = _connect()
    try:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO audit_log (actor, action, target, details) VALUES (%s, %s, %s, %s)", rows
            )
            cur.execute("SELECT COUNT(*) AS n FROM audit_log WHERE created_at > NOW() - INTERVAL 1 HOUR")
            recent = cur.fetchone()["n"]
        conn.commit()
    except pymysql.MySQLError:
        conn.rollback()
        raise
    finally:
        conn.close()
    return {"inserted": len(rows), "last_hour": recent}
''', "requirements.txt": "PyMySQL==1.1.1\n"})
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
add("http-api", "python", {"handler.py": r'''import os

import requests

GITHUB_GRAPHQL = "https://api.github.com/graphql"
QUERY = """
query($owner: String!, $name: String!, $after: String) {
  repository(owner: $owner, name: $name) {
    issues(first: 50, after: $after, states: OPEN, orderBy: {field: CREATED_AT, direction: DESC}) {
      pageInfo { hasNextPage endCursor }
      nodes { number title createdAt labels(first: 5) { nodes { name } } }
    }
  }
}
"""


class GraphQLError(RuntimeError):
    pass


def gql(session, query, variables):
    resp = session.post(GITHUB_GRAPHQL, json={"query": query, "variables": variables}, timeout=15)
    resp.raise_for_status()
    payload = resp.json()
    if payload.get("errors"):
        raise GraphQLError("; ".join(e["message"] for e in payload["errors"]))
    return payload["data"]


def handle(event, context=None):
    session = requests.Session()
    session.headers["Authorization"] = f"bearer {os.environ['GITHUB_TOKEN']}"
    issues, after = [], None
    while len(issues) < int(event.get("max", 200)):
        data = gql(session, QUERY, {"owner": event["owner"], "name": event["repo"], "after": after})
        page = data["repository"]["issues"]
        issues += [
            {"number": n["number"], "title": n["title"], "labels": [l["name"] for l in n["labels"]["nodes"]]}
            for n in page["nodes"]
        ]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    return {"count": len(issues), "issues": issues}
''', "requirements.txt": "requests==2.32.3\n"})
add("http-api", "python", {"handler.py": r'''"""Thin client for the payments provider: retries, idempotency keys, typed errors."""
import os
import uuid

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry


class PaymentsError(Exception):
    def __init__(self, status, code, message):
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code = status, code


class PaymentsClient:
    def __init__(self, api_key, base_url="https://api.payments.example.com/v1"):
        self.base_url = base_url
        self.session = requests.Session()
        self.session.auth = (api_key, "")
        retry = Retry(total=4, backoff_factor=0.5, status_forcelist=(429, 500, 502, 503, 504),
                      allowed_methods=frozenset({"GET", "POST"}), respect_retry_after_header=True)
        self.session.mount("https://", HTTPAdapter(max_retries=retry))

    def _request(self, method, path, **kwargs):
        resp = self.session.request(method, f"{self.base_url}{path}", timeout=(3, 20), **kwargs)
        if resp.status_code >= 400:
            err = resp.json().get("error", {}) if resp.content else {}
            raise PaymentsError(resp.status_code, err.get("code", "unknown"), err.get("message", resp.reason))
        return resp.json()

    def create_charge(self, amount, currency, customer, idempotency_key=None):
        # POST is only safe to retry because the provider de-duplicates on this key
        headers = {"Idempotency-Key": idempotency_key or str(uuid.uuid4())}
        return self._request("POST", "/charges", headers=headers,
                             data={"amount": amount, "currency": currency, "customer": customer})


client = PaymentsClient(os.environ["PAYMENTS_API_KEY"])


def handle(event, context=None):
    try:
        charge = client.create_charge(int(event["amount"]), event.get("currency", "usd"), event["customer"],
                                      idempotency_key=event.get("order_id"))
    except PaymentsError as exc:
        return {"ok": False, "status": exc.status, "code": exc.code}
    return {"ok": True, "charge_id": charge["id"], "status": charge["status"]}
''', "requirements.txt": "requests==2.32.3\n"})
add("http-api", "python", {"handler.py": r'''import asyncio
import os
import time

import httpx

RATE = float(os.environ.get("REQUESTS_PER_SECOND", "5"))
BASE = os.environ.get("CATALOG_API", "https://catalog.example.com/api/v2")


class TokenBucket:
    def __init__(self, rate: float, capacity: int):
        self.rate, self.capacity = rate, capacity
        self.tokens, self.updated = float(capacity), time.monotonic()
        self.lock = asyncio.Lock()

    async def take(self):
        async with self.lock:
            while True:
                now = time.monotonic()
                self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
                self.updated = now
                if self.tokens >= 1:
                    self.tokens -= 1
                    return
                await asyncio.sleep((1 - self.tokens) / self.rate)


async def fetch(client, bucket, sku):
    for attempt in range(3):
        await bucket.take()
        r = await client.get(f"{BASE}/products/{sku}")
        if r.status_code == 429:
            await asyncio.sleep(float(r.headers.get("retry-after", 2 ** attempt)))
            continue
        if r.status_code == 404:
            return sku, None
        r.raise_for_status()
        return sku, r.json()
    return sku, {"error": "rate limited"}


async def main(skus):
    bucket = TokenBucket(RATE, capacity=int(RATE))
    async with httpx.AsyncClient(timeout=10, headers={"x-api-key": os.environ["CATALOG_KEY"]}) as client:
        return dict(await asyncio.gather(*(fetch(client, bucket, s) for s in skus)))


def handle(event, context=None):
    return asyncio.run(main(event["skus"][:500]))
''', "requirements.txt": "httpx==0.27.0\n"})
add("http-api", "python", {"handler.py": r'''import os
from datetime import datetime, timedelta, timezone

import requests


def iter_pages(session, url, params):
    """Follows RFC 5988 Link headers (rel="next") the way the Zendesk and GitHub APIs page."""
    while url:
        resp = session.get(url, params=params, timeout=20)
        resp.raise_for_status()
        yield resp.json()
        url = resp.links.get("next", {}).get("url")
        params = None  # the next link already carries the query string


def handle(event, context=None):
    since = datetime.now(timezone.utc) - timedelta(hours=int(event.get("hours", 24)))
    session = requests.Session()
    session.headers.update({
        "Authorization": f"token {os.environ['GITHUB_TOKEN']}",
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
    })
    url = f"https://api.github.com/repos/{event['repo']}/issues"
    opened = closed = 0
    for page in iter_pages(session, url, {"state": "all", "since": since.isoformat(), "per_page": 100}):
        for issue in page:
            if "pull_request" in issue:
                continue
            if issue["state"] == "closed":
                closed += 1
            else:
                opened += 1
    return {"repo": event["repo"], "since": since.isoformat(), "open": opened, "closed": closed}
''', "requirements.txt": "requests==2.32.3\n"})
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
add("image", "python", {"handler.py": r'''"""S3 upload trigger: writes 3 JPEG renditions of every new photo next to the original."""
import io
import os
import urllib.parse

import boto3
from PIL import Image, ImageOps

s3 = boto3.client("s3")
SIZES = {"sm": 320, "md": 800, "lg": 1600}
DEST_PREFIX = os.environ.get("RENDITIONS_PREFIX", "renditions/")


def handle(event, context=None):
    written = []
    for record in event["Records"]:
        bucket = record["s3"]["bucket"]["name"]
        key = urllib.parse.unquote_plus(record["s3"]["object"]["key"])
        if key.startswith(DEST_PREFIX):
            continue  # don't process our own output
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        with Image.open(io.BytesIO(body)) as original:
            original = ImageOps.exif_transpose(original).convert("RGB")
            for label, width in SIZES.items():
                if original.width <= width and label != "sm":
                    continue
                copy = original.copy()
                copy.thumbnail((width, width * 4), Image.Resampling.LANCZOS)
                out = io.BytesIO()
                copy.save(out, "JPEG", quality=82, optimize=True, progressive=True)
                dest = f"{DEST_PREFIX}{label}/{os.path.splitext(key)[0]}.jpg"
                s3.put_object(Bucket=bucket, Key=dest, Body=out.getvalue(), ContentType="image/jpeg",
                              CacheControl="public, max-age=31536000, immutable")
                written.append(dest)
    return {"written": written}
''', "requirements.txt": "Pillow==10.4.0\nboto3>=1.34\n"})
add("image", "python", {"handler.py": r'''import base64
import io

from PIL import Image
from PIL.ExifTags import GPSTAGS, TAGS


def _exif(img):
    exif = img.getexif()
    named = {TAGS.get(tag, tag): value for tag, value in exif.items()}
    gps = exif.get_ifd(0x8825)
    return named, {GPSTAGS.get(t, t): v for t, v in gps.items()}


def handle(event, context=None):
    """Returns the photo's camera metadata and a copy with all EXIF (including GPS) removed."""
    try:
        img = Image.open(io.BytesIO(base64.b64decode(event["photo"], validate=True)))
        img.load()
    except (ValueError, OSError) as exc:
        return {"error": f"not an image: {exc}"}
    if img.format not in ("JPEG", "TIFF", "WEBP"):
        return {"error": f"unsupported format {img.format}"}

    meta, gps = _exif(img)
    clean = Image.new(img.mode, img.size)
    clean.putdata(list(img.getdata()))
    buf = io.BytesIO()
    clean.save(buf, format="JPEG", quality=90)
    return {
        "camera": f"{meta.get('Make', '')} {meta.get('Model', '')}".strip() or None,
        "taken": str(meta.get("DateTime")) if meta.get("DateTime") else None,
        "had_gps": bool(gps),
        "size": img.size,
        "clean_photo": base64.b64encode(buf.getvalue()).decode(),
    }
''', "requirements.txt": "Pillow==10.4.0\n"})
add("image", "python", {"handler.py": r'''import base64
import io

import qrcode
from qrcode.constants import ERROR_CORRECT_M
from qrcode.image.svg import SvgPathImage


def handle(event, context=None):
    data = event.get("data", "")
    if not data or len(data) > 2000:
        return {"statusCode": 400, "body": "data must be 1..2000 characters"}
    qr = qrcode.QRCode(error_correction=ERROR_CORRECT_M, box_size=int(event.get("box", 10)), border=4)
    qr.add_data(data)
    qr.make(fit=True)
    if event.get("format") == "svg":
        svg = qr.make_image(image_factory=SvgPathImage).to_string(encoding="unicode")
        return {"statusCode": 200, "headers": {"content-type": "image/svg+xml"}, "body": svg}
    img = qr.make_image(fill_color=event.get("fg", "black"), back_color=event.get("bg", "white"))
    buf = io.BytesIO()
    img.save(buf)
    return {
        "statusCode": 200,
        "headers": {"content-type": "image/png"},
        "isBase64Encoded": True,
        "body": base64.b64encode(buf.getvalue()).decode(),
    }
''', "requirements.txt": "qrcode[pil]==7.4.2\n"})
add("image", "python", {"handler.py": r'''import colorsys
import hashlib
import io

from PIL import Image, ImageDraw, ImageFont

FONT_PATH = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"


def _initials(name: str) -> str:
    parts = [p for p in name.replace("-", " ").split() if p]
    if not parts:
        return "?"
    return (parts[0][0] + (parts[-1][0] if len(parts) > 1 else "")).upper()


def _colour(seed: str) -> tuple[int, int, int]:
    hue = int(hashlib.md5(seed.encode()).hexdigest()[:4], 16) / 0xFFFF
    r, g, b = colorsys.hls_to_rgb(hue, 0.45, 0.55)
    return int(r * 255), int(g * 255), int(b * 255)


def handle(event, context=None):
    """Placeholder avatar: the user's initials on a colour derived from their id."""
    size = max(32, min(int(event.get("size", 128)), 512))
    img = Image.new("RGB", (size, size), _colour(event.get("user_id", event.get("name", ""))))
    draw = ImageDraw.Draw(img)
    try:
        font = ImageFont.truetype(FONT_PATH, size // 2)
    except OSError:
        font = ImageFont.load_default()
    text = _initials(event.get("name", ""))
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    draw.text(((size - (right - left)) / 2 - left, (size - (bottom - top)) / 2 - top), text, font=font, fill="white")
    buf = io.BytesIO()
    img.save(buf, "WEBP", quality=90)
    return {"content_type": "image/webp", "bytes": buf.getvalue().hex()}
''', "requirements.txt": "Pillow==10.4.0\n"})
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
add("subprocess", "python", {"handler.py": r'''import json
import os
import subprocess

import boto3

s3 = boto3.client("s3")
FFMPEG = os.environ.get("FFMPEG_PATH", "/opt/bin/ffmpeg")
FFPROBE = os.environ.get("FFPROBE_PATH", "/opt/bin/ffprobe")


def probe_duration(url: str) -> float:
    out = subprocess.run(
        [FFPROBE, "-v", "error", "-show_entries", "format=duration", "-of", "json", url],
        capture_output=True, text=True, check=True, timeout=30,
    ).stdout
    return float(json.loads(out)["format"]["duration"])


def handle(event, context=None):
    """Video poster frame: ffmpeg reads the clip straight from a presigned URL (no /tmp copy
    of multi-GB files) and writes the frame at 10% to stdout, which goes back to S3."""
    bucket, key = event["bucket"], event["key"]
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=600)
    try:
        at = probe_duration(url) * 0.1
        frame = subprocess.run(
            [FFMPEG, "-hide_banner", "-loglevel", "error", "-ss", f"{at:.2f}", "-i", url,
             "-frames:v", "1", "-vf", "scale=1280:-2", "-q:v", "3", "-f", "image2pipe", "-vcodec", "mjpeg", "-"],
            check=True, capture_output=True, timeout=120,
        ).stdout
    except subprocess.CalledProcessError as exc:
        return {"ok": False, "stderr": (exc.stderr or b"").decode(errors="replace")[-2000:]}
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": "ffmpeg timed out"}
    dest = key.rsplit(".", 1)[0] + "/poster.jpg"
    s3.put_object(Bucket=bucket, Key=dest, Body=frame, ContentType="image/jpeg")
    return {"ok": True, "poster": dest, "at_seconds": round(at, 2)}
''', "requirements.txt": "boto3>=1.34\n"})
add("subprocess", "python", {"handler.py": r'''"""Reports the newest release tag of each configured repository (cron, hourly)."""
import os
import re
import subprocess

REPOS = [r.strip() for r in os.environ.get("WATCH_REPOS", "https://github.com/psf/requests.git").split(",") if r.strip()]
SEMVER = re.compile(r"refs/tags/v?(\d+)\.(\d+)\.(\d+)$")


def latest_tag(repo_url: str) -> str | None:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # never block on a credential prompt
    proc = subprocess.run(
        ["git", "ls-remote", "--tags", "--refs", repo_url],
        capture_output=True, text=True, timeout=30, env=env,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip() or f"git exited {proc.returncode}")
    versions = []
    for line in proc.stdout.splitlines():
        _sha, ref = line.split("\t", 1)
        m = SEMVER.search(ref)
        if m:
            versions.append(tuple(int(x) for x in m.groups()))
    return ".".join(map(str, max(versions))) if versions else None


def handle(event, context=None):
    report = {}
    for repo in REPOS:
        try:
            report[repo] = latest_tag(repo)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            report[repo] = f"error: {exc}"
    return report
'''})
add("subprocess", "python", {"handler.py": r'''import asyncio
import base64
import pathlib
import tempfile

SOFFICE = "soffice"
ALLOWED = {".docx", ".odt", ".pptx", ".xlsx", ".rtf"}


async def convert_to_pdf(src: pathlib.Path, outdir: pathlib.Path, timeout: float = 90) -> pathlib.Path:
    proc = await asyncio.create_subprocess_exec(
        SOFFICE, "--headless", "--norestore", f"-env:UserInstallation=file://{outdir}/profile",
        "--convert-to", "pdf", "--outdir", str(outdir), str(src),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        _, stderr = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    if proc.returncode != 0:
        raise RuntimeError(stderr.decode(errors="replace"))
    return outdir / (src.stem + ".pdf")


def handle(event, context=None):
    suffix = pathlib.Path(event.get("filename", "document.docx")).suffix.lower()
    if suffix not in ALLOWED:
        return {"error": f"cannot convert {suffix or 'files without extension'}"}
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = pathlib.Path(tmp)
        src = tmpdir / f"input{suffix}"
        src.write_bytes(base64.b64decode(event["content"]))
        try:
            pdf = asyncio.run(convert_to_pdf(src, tmpdir))
        except asyncio.TimeoutError:
            return {"error": "conversion timed out"}
        except RuntimeError as exc:
            return {"error": str(exc)[-500:]}
        return {"filename": pathlib.Path(event.get("filename", "document")).stem + ".pdf",
                "pdf": base64.b64encode(pdf.read_bytes()).decode()}
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
add("web-handler", "node", {"handler.js": r'''const Stripe = require("stripe");

const stripe = Stripe(process.env.STRIPE_SECRET_KEY);
const endpointSecret = process.env.STRIPE_WEBHOOK_SECRET;

async function fulfil(session) {
  // hand over to the fulfilment queue; idempotent on session.id
  console.log(`fulfilling ${session.id} for ${session.customer_details?.email}`);
}

exports.handler = async (event) => {
  const signature = event.headers["stripe-signature"] || event.headers["Stripe-Signature"];
  const rawBody = event.isBase64Encoded ? Buffer.from(event.body, "base64") : event.body;
  let evt;
  try {
    evt = stripe.webhooks.constructEvent(rawBody, signature, endpointSecret);
  } catch (err) {
    console.warn("webhook signature verification failed:", err.message);
    return { statusCode: 400, body: `Webhook Error: ${err.message}` };
  }

  switch (evt.type) {
    case "checkout.session.completed":
      if (evt.data.object.payment_status === "paid") await fulfil(evt.data.object);
      break;
    case "checkout.session.async_payment_succeeded":
      await fulfil(evt.data.object);
      break;
    case "invoice.payment_failed":
      console.log(`payment failed for customer ${evt.data.object.customer}`);
      break;
    default:
      // ignore everything else, but acknowledge so Stripe stops retrying
      break;
  }
  return { statusCode: 200, body: JSON.stringify({ received: true }) };
};
''', "package.json": json.dumps({"name": "stripe-webhook", "version": "1.2.0", "dependencies": {"stripe": "^16.2.0"}}, indent=2)})
add("web-handler", "node", {"handler.mjs": r'''import { Hono } from "hono";
import { handle } from "hono/aws-lambda";
import { cors } from "hono/cors";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";

const app = new Hono();
const bookmarks = new Map();

app.use("/api/*", cors({ origin: ["https://app.example.com"], allowMethods: ["GET", "POST", "DELETE"] }));

const Bookmark = z.object({
  url: z.string().url(),
  title: z.string().min(1).max(200),
  tags: z.array(z.string().max(30)).max(10).default([]),
});

app.get("/api/bookmarks", (c) => {
  const tag = c.req.query("tag");
  const all = [...bookmarks.values()];
  return c.json(tag ? all.filter((b) => b.tags.includes(tag)) : all);
});

app.post("/api/bookmarks", zValidator("json", Bookmark), (c) => {
  const data = c.req.valid("json");
  const id = crypto.randomUUID();
  bookmarks.set(id, { id, ...data, createdAt: new Date().toISOString() });
  return c.json(bookmarks.get(id), 201);
});

app.delete("/api/bookmarks/:id", (c) => {
  return bookmarks.delete(c.req.param("id")) ? c.body(null, 204) : c.json({ error: "not found" }, 404);
});

app.notFound((c) => c.json({ error: "no such route" }, 404));

export const handler = handle(app);
''', "package.json": json.dumps({"name": "bookmarks-api", "type": "module", "version": "0.3.1",
                                  "dependencies": {"hono": "^4.5.0", "@hono/zod-validator": "^0.2.2", "zod": "^3.23.8"}}, indent=2)})
add("web-handler", "node", {"handler.js": r'''const { createRemoteJWKSet, jwtVerify, errors } = require("jose");

const ISSUER = process.env.AUTH_ISSUER; // e.g. https://example.eu.auth0.com/
const JWKS = createRemoteJWKSet(new URL(".well-known/jwks.json", ISSUER));

async function authenticate(headers) {
  const header = headers.authorization || headers.Authorization || "";
  const [scheme, token] = header.split(" ");
  if (scheme !== "Bearer" || !token) throw Object.assign(new Error("missing bearer token"), { status: 401 });
  try {
    const { payload } = await jwtVerify(token, JWKS, { issuer: ISSUER, audience: process.env.AUTH_AUDIENCE });
    return payload;
  } catch (err) {
    const status = err instanceof errors.JWTExpired ? 401 : 403;
    throw Object.assign(new Error(err.code || "invalid token"), { status });
  }
}

exports.handler = async (event) => {
  let claims;
  try {
    claims = await authenticate(event.headers || {});
  } catch (err) {
    return { statusCode: err.status || 401, body: JSON.stringify({ error: err.message }) };
  }
  const permissions = claims.permissions || [];
  if (!permissions.includes("read:reports")) {
    return { statusCode: 403, body: JSON.stringify({ error: "read:reports required" }) };
  }
  return {
    statusCode: 200,
    body: JSON.stringify({ user: claims.sub, org: claims.org_id, reports: [] }),
  };
};
''', "package.json": json.dumps({"name": "reports-api", "version": "1.0.0", "dependencies": {"jose": "^5.6.3"}}, indent=2)})
add("web-handler", "node", {"handler.js": r'''const { Pool } = require("pg");
const { stringify } = require("csv-stringify/sync");

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 2 });

exports.handler = async (event) => {
  const { from, to } = event.queryStringParameters || {};
  if (!from || !to || Number.isNaN(Date.parse(from)) || Number.isNaN(Date.parse(to))) {
    return { statusCode: 400, body: "from and to must be ISO dates" };
  }
  const { rows } = await pool.query(
    `SELECT i.number, c.name AS customer, i.issued_on, i.due_on, i.amount_cents, i.status
       FROM invoices i JOIN customers c ON c.id = i.customer_id
      WHERE i.issued_on BETWEEN $1 AND $2
      ORDER BY i.issued_on, i.number`,
    [from, to],
  );
  const csv = stringify(
    rows.map((r) => ({ ...r, amount: (r.amount_cents / 100).toFixed(2), issued_on: r.issued_on.toISOString().slice(0, 10) })),
    { header: true, columns: ["number", "customer", "issued_on", "due_on", "amount", "status"] },
  );
  return {
    statusCode: 200,
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="invoices_${from}_${to}.csv"`,
    },
    body: csv,
  };
};
''', "package.json": json.dumps({"name": "invoice-export", "version": "1.0.0", "dependencies": {"pg": "^8.12.0", "csv-stringify": "^6.5.0"}}, indent=2)})
add("web-handler", "node", {"handler.js": r'''const crypto = require("node:crypto");

const SIGNING_SECRET = process.env.SLACK_SIGNING_SECRET;
const MAX_SKEW_SECONDS = 60 * 5;

function verifySlack(headers, rawBody) {
  const timestamp = headers["x-slack-request-timestamp"];
  const signature = headers["x-slack-signature"] || "";
  if (!timestamp || Math.abs(Date.now() / 1000 - Number(timestamp)) > MAX_SKEW_SECONDS) return false;
  const base = `v0:${timestamp}:${rawBody}`;
  const expected = "v0=" + crypto.createHmac("sha256", SIGNING_SECRET).update(base).digest("hex");
  const a = Buffer.from(expected);
  const b = Buffer.from(signature);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

exports.handler = async (event) => {
  const headers = Object.fromEntries(Object.entries(event.headers || {}).map(([k, v]) => [k.toLowerCase(), v]));
  const raw = event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body || "";
  if (!verifySlack(headers, raw)) return { statusCode: 401, body: "invalid signature" };

  const form = new URLSearchParams(raw);
  const [sub, ...rest] = (form.get("text") || "").trim().split(/\s+/);
  let text;
  switch (sub) {
    case "oncall":
      text = `Today's on-call is <@${process.env.ONCALL_USER_ID}>`;
      break;
    case "status":
      text = rest.length ? `Looking up status for *${rest.join(" ")}*…` : "Usage: /ops status <service>";
      break;
    default:
      text = "Commands: `oncall`, `status <service>`";
  }
  return {
    statusCode: 200,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ response_type: "ephemeral", text }),
  };
};
'''})
add("web-handler", "node", {"handler.js": r'''const { PrismaClient } = require("@prisma/client");

const prisma = new PrismaClient();
const MAX_TAKE = 50;

const respond = (statusCode, body) => ({
  statusCode,
  headers: { "content-type": "application/json", "cache-control": "no-store" },
  body: JSON.stringify(body),
});

exports.handler = async (event) => {
  const q = event.queryStringParameters || {};
  const take = Math.min(Number.parseInt(q.limit ?? "20", 10) || 20, MAX_TAKE);
  const where = {
    published: true,
    ...(q.author ? { author: { handle: q.author } } : {}),
    ...(q.search ? { title: { contains: q.search, mode: "insensitive" } } : {}),
  };
  try {
    const posts = await prisma.post.findMany({
      where,
      take: take + 1,
      ...(q.cursor ? { cursor: { id: q.cursor }, skip: 1 } : {}),
      orderBy: [{ publishedAt: "desc" }, { id: "desc" }],
      select: { id: true, title: true, slug: true, publishedAt: true, author: { select: { handle: true } } },
    });
    const hasMore = posts.length > take;
    const page = hasMore ? posts.slice(0, take) : posts;
    return respond(200, { data: page, nextCursor: hasMore ? page[page.length - 1].id : null });
  } catch (err) {
    if (err.code === "P2025") return respond(400, { error: "cursor no longer exists" });
    console.error(err);
    return respond(500, { error: "internal error" });
  }
};
''', "package.json": json.dumps({"name": "blog-posts", "version": "2.1.0", "dependencies": {"@prisma/client": "^5.17.0"}}, indent=2)})
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
add("http-api", "node", {"handler.js": r'''const { GraphQLClient, gql } = require("graphql-request");

const shop = new GraphQLClient(`https://${process.env.SHOP_DOMAIN}/api/2024-07/graphql.json`, {
  headers: { "X-Shopify-Storefront-Access-Token": process.env.STOREFRONT_TOKEN },
});

const PRODUCTS = gql`
  query Products($first: Int!, $query: String) {
    products(first: $first, query: $query, sortKey: BEST_SELLING) {
      edges {
        node {
          handle
          title
          availableForSale
          priceRange { minVariantPrice { amount currencyCode } }
          featuredImage { url altText }
        }
      }
    }
  }
`;

exports.handler = async (event) => {
  const first = Math.min(Number(event.first) || 12, 50);
  try {
    const data = await shop.request(PRODUCTS, { first, query: event.query || null });
    return data.products.edges.map(({ node }) => ({
      handle: node.handle,
      title: node.title,
      inStock: node.availableForSale,
      price: `${node.priceRange.minVariantPrice.amount} ${node.priceRange.minVariantPrice.currencyCode}`,
      image: node.featuredImage?.url ?? null,
    }));
  } catch (err) {
    // graphql-request throws ClientError with the GraphQL errors attached
    const messages = err.response?.errors?.map((e) => e.message) ?? [err.message];
    return { error: messages.join("; ") };
  }
};
''', "package.json": json.dumps({"name": "storefront-products", "version": "1.0.0", "dependencies": {"graphql-request": "^6.1.0", "graphql": "^16.9.0"}}, indent=2)})
add("http-api", "node", {"handler.js": r'''const { randomUUID } = require("node:crypto");

const BASE_URL = process.env.BILLING_API_URL || "https://api.billing.example.com/v2";
const RETRYABLE = new Set([408, 409, 425, 429, 500, 502, 503, 504]);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class BillingError extends Error {
  constructor(status, body) {
    super(body?.error?.message || `billing API returned ${status}`);
    this.status = status;
    this.code = body?.error?.type;
  }
}

async function request(method, path, body, { retries = 3, idempotencyKey = randomUUID() } = {}) {
  for (let attempt = 0; ; attempt++) {
    let res;
    try {
      res = await fetch(`${BASE_URL}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${process.env.BILLING_API_KEY}`,
          "content-type": "application/json",
          "idempotency-key": idempotencyKey,
        },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(10_000),
      });
    } catch (err) {
      if (attempt >= retries) throw err; // network error or timeout
      await sleep(2 ** attempt * 250 + Math.random() * 250);
      continue;
    }
    if (res.ok) return res.json();
    if (!RETRYABLE.has(res.status) || attempt >= retries) {
      throw new BillingError(res.status, await res.json().catch(() => null));
    }
    const retryAfter = Number(res.headers.get("retry-after"));
    await sleep(retryAfter ? retryAfter * 1000 : 2 ** attempt * 250 + Math.random() * 250);
  }
}

exports.handler = async (event) => {
  try {
    const sub = await request("POST", "/subscriptions", { customer: event.customerId, price: event.priceId },
      { idempotencyKey: event.requestId });
    return { ok: true, subscription: sub.id, status: sub.status };
  } catch (err) {
    return { ok: false, status: err.status ?? null, error: err.message };
  }
};
'''})
add("http-api", "node", {"handler.js": r'''const Bottleneck = require("bottleneck");
const axios = require("axios");

// the CRM allows 10 requests / second and 5 in flight per API key
const limiter = new Bottleneck({ maxConcurrent: 5, minTime: 100, reservoir: 10, reservoirRefreshAmount: 10, reservoirRefreshInterval: 1000 });
const crm = axios.create({
  baseURL: "https://api.hubapi.com/crm/v3",
  headers: { Authorization: `Bearer ${process.env.HUBSPOT_TOKEN}` },
  timeout: 8000,
});

limiter.on("failed", async (error, info) => {
  if (error.response?.status === 429 && info.retryCount < 3) {
    return Number(error.response.headers["retry-after"] || 1) * 1000; // retry after this many ms
  }
  return undefined;
});

const getContact = limiter.wrap(async (email) => {
  const { data } = await crm.post("/objects/contacts/search", {
    filterGroups: [{ filters: [{ propertyName: "email", operator: "EQ", value: email }] }],
    properties: ["firstname", "lastname", "lifecyclestage"],
    limit: 1,
  });
  return data.results[0] || null;
});

exports.handler = async (event) => {
  const emails = [...new Set((event.emails || []).map((e) => e.trim().toLowerCase()))].slice(0, 200);
  const results = await Promise.allSettled(emails.map((e) => getContact(e)));
  return emails.map((email, i) => ({
    email,
    found: results[i].status === "fulfilled" && results[i].value !== null,
    stage: results[i].value?.properties?.lifecyclestage ?? null,
    error: results[i].status === "rejected" ? results[i].reason.message : undefined,
  }));
};
''', "package.json": json.dumps({"name": "crm-lookup", "version": "1.0.0", "dependencies": {"axios": "^1.7.2", "bottleneck": "^2.19.5"}}, indent=2)})
add("http-api", "node", {"handler.js": r'''// OAuth2 client-credentials: the token is cached across warm invocations and refreshed early.
let cached = { token: null, expiresAt: 0 };

async function accessToken() {
  if (cached.token && Date.now() < cached.expiresAt - 60_000) return cached.token;
  const res = await fetch(process.env.TOKEN_URL, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: process.env.CLIENT_ID,
      client_secret: process.env.CLIENT_SECRET,
      scope: "shipments.read",
    }),
  });
  if (!res.ok) throw new Error(`token endpoint returned ${res.status}`);
  const { access_token, expires_in } = await res.json();
  cached = { token: access_token, expiresAt: Date.now() + expires_in * 1000 };
  return access_token;
}

exports.handler = async (event) => {
  const tracking = encodeURIComponent(event.trackingNumber);
  let res = await fetch(`${process.env.CARRIER_API}/shipments/${tracking}`, {
    headers: { authorization: `Bearer ${await accessToken()}` },
  });
  if (res.status === 401) {
    cached.token = null; // revoked early: fetch a fresh one once
    res = await fetch(`${process.env.CARRIER_API}/shipments/${tracking}`, {
      headers: { authorization: `Bearer ${await accessToken()}` },
    });
  }
  if (res.status === 404) return { found: false };
  if (!res.ok) throw new Error(`carrier API returned ${res.status}`);
  const shipment = await res.json();
  return { found: true, status: shipment.status, eta: shipment.estimatedDelivery, events: shipment.events?.slice(-5) };
};
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
add("image", "node", {"handler.js": r'''const { S3Client, GetObjectCommand, PutObjectCommand } = require("@aws-sdk/client-s3");
const sharp = require("sharp");
const path = require("node:path");

const s3 = new S3Client({});
const WIDTHS = [320, 640, 1280];

exports.handler = async (event) => {
  const jobs = event.Records.map(async (record) => {
    const Bucket = record.s3.bucket.name;
    const Key = decodeURIComponent(record.s3.object.key.replace(/\+/g, " "));
    if (!Key.startsWith("uploads/")) return [];

    const { Body } = await s3.send(new GetObjectCommand({ Bucket, Key }));
    const original = Buffer.from(await Body.transformToByteArray());
    const { width } = await sharp(original).metadata();
    const name = path.parse(Key).name;

    return Promise.all(
      WIDTHS.filter((w) => w < width || w === WIDTHS[0]).map(async (w) => {
        const body = await sharp(original).rotate().resize({ width: w, withoutEnlargement: true }).webp({ quality: 80 }).toBuffer();
        const dest = `responsive/${name}-${w}w.webp`;
        await s3.send(new PutObjectCommand({ Bucket, Key: dest, Body: body, ContentType: "image/webp" }));
        return dest;
      }),
    );
  });
  return { written: (await Promise.all(jobs)).flat() };
};
''', "package.json": json.dumps({"name": "responsive-images", "version": "1.0.0", "dependencies": {"sharp": "^0.33.4", "@aws-sdk/client-s3": "^3.614.0"}}, indent=2)})
add("image", "node", {"handler.js": r'''const sharp = require("sharp");

const MAX_INPUT_BYTES = 8 * 1024 * 1024;

exports.handler = async (event) => {
  const input = Buffer.from(event.body || "", event.isBase64Encoded ? "base64" : "utf8");
  if (input.length === 0 || input.length > MAX_INPUT_BYTES) {
    return { statusCode: 413, body: "image must be between 1 byte and 8 MiB" };
  }
  let meta;
  try {
    meta = await sharp(input).metadata();
  } catch {
    return { statusCode: 415, body: "unsupported image" };
  }
  if (meta.width < 64 || meta.height < 64) return { statusCode: 422, body: "avatar must be at least 64x64" };

  const size = Math.min(Number(event.queryStringParameters?.size) || 256, 1024);
  const avatar = await sharp(input, { failOn: "truncated" })
    .rotate()
    .resize(size, size, { fit: "cover", position: sharp.strategy.attention })
    .jpeg({ quality: 85, mozjpeg: true })
    .toBuffer();
  return {
    statusCode: 200,
    headers: { "content-type": "image/jpeg", "x-original-size": `${meta.width}x${meta.height}` },
    isBase64Encoded: true,
    body: avatar.toString("base64"),
  };
};
''', "package.json": json.dumps({"name": "avatar-crop", "version": "1.0.0", "dependencies": {"sharp": "^0.33.4"}}, indent=2)})
add("image", "node", {"handler.js": r'''const Jimp = require("jimp");

const LOGO_URL = process.env.WATERMARK_URL || "https://cdn.example.com/brand/logo-white.png";
let logoPromise;

function logo() {
  logoPromise ??= Jimp.read(LOGO_URL);
  return logoPromise;
}

exports.handler = async (event) => {
  const photo = await Jimp.read(Buffer.from(event.image, "base64"));
  const mark = (await logo()).clone();
  mark.resize(Math.round(photo.bitmap.width / 5), Jimp.AUTO).opacity(0.6);

  const margin = Math.round(photo.bitmap.width * 0.02);
  photo.composite(mark, photo.bitmap.width - mark.bitmap.width - margin, photo.bitmap.height - mark.bitmap.height - margin, {
    mode: Jimp.BLEND_SOURCE_OVER,
  });
  if (event.caption) {
    const font = await Jimp.loadFont(Jimp.FONT_SANS_32_WHITE);
    photo.print(font, margin, margin, event.caption.slice(0, 80));
  }
  const out = await photo.quality(88).getBufferAsync(Jimp.MIME_JPEG);
  return { image: out.toString("base64"), width: photo.bitmap.width, height: photo.bitmap.height };
};
''', "package.json": json.dumps({"name": "watermark", "version": "0.9.0", "dependencies": {"jimp": "^0.22.12"}}, indent=2)})
add("image", "node", {"handler.js": r'''const sharp = require("sharp");
const { encode } = require("blurhash");

// Computes the BlurHash placeholder the gallery shows while the real photo loads.
exports.handler = async (event) => {
  const url = event.imageUrl;
  if (!/^https:\/\/images\.example\.com\//.test(url)) throw new Error("only our CDN is allowed");
  const res = await fetch(url);
  if (!res.ok) throw new Error(`fetch failed: ${res.status}`);
  const input = Buffer.from(await res.arrayBuffer());

  const { data, info } = await sharp(input)
    .raw()
    .ensureAlpha()
    .resize(32, 32, { fit: "inside" })
    .toBuffer({ resolveWithObject: true });
  const hash = encode(new Uint8ClampedArray(data), info.width, info.height, 4, 3);
  const { dominant } = await sharp(input).stats();
  return {
    blurhash: hash,
    dominantColor: `#${[dominant.r, dominant.g, dominant.b].map((c) => c.toString(16).padStart(2, "0")).join("")}`,
  };
};
''', "package.json": json.dumps({"name": "blurhash-placeholder", "version": "1.0.0", "dependencies": {"sharp": "^0.33.4", "blurhash": "^2.0.5"}}, indent=2)})
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

# ---------------------------------------------------------------- more hand-written samples (appended so earlier names stay)
add("s3", "python", {"handler.py": r'''"""Gives the browser a short-lived presigned POST so it uploads straight to S3."""
import json
import os
import re
import uuid

import boto3
from botocore.config import Config

BUCKET = os.environ["UPLOAD_BUCKET"]
MAX_BYTES = 25 * 1024 * 1024
ALLOWED_TYPES = {"image/jpeg", "image/png", "image/webp", "application/pdf"}
s3 = boto3.client("s3", config=Config(signature_version="s3v4", region_name=os.environ.get("AWS_REGION", "eu-west-1")))


def handle(event, context=None):
    user = event["requestContext"]["authorizer"]["claims"]["sub"]
    body = json.loads(event.get("body") or "{}")
    content_type = body.get("contentType", "")
    if content_type not in ALLOWED_TYPES:
        return {"statusCode": 415, "body": json.dumps({"error": f"{content_type!r} not allowed"})}
    safe_name = re.sub(r"[^A-Za-z0-9._-]", "_", body.get("filename", "upload"))[:100]
    key = f"incoming/{user}/{uuid.uuid4()}/{safe_name}"
    post = s3.generate_presigned_post(
        Bucket=BUCKET,
        Key=key,
        Fields={"Content-Type": content_type},
        Conditions=[{"Content-Type": content_type}, ["content-length-range", 1, MAX_BYTES]],
        ExpiresIn=300,
    )
    return {"statusCode": 200, "body": json.dumps({"key": key, "url": post["url"], "fields": post["fields"]})}
''', "requirements.txt": "boto3>=1.34\n"})
add("queue", "python", {"handler.py": r'''"""SQS consumer for 'order.paid' events: idempotent, reports partial batch failures."""
import json
import logging
import os
import time

import boto3
from botocore.exceptions import ClientError

log = logging.getLogger()
log.setLevel(logging.INFO)
dynamodb = boto3.resource("dynamodb")
processed = dynamodb.Table(os.environ["PROCESSED_TABLE"])
orders = dynamodb.Table(os.environ["ORDERS_TABLE"])


class AlreadyDone(Exception):
    pass


def _claim(message_id):
    try:
        processed.put_item(
            Item={"id": message_id, "expires": int(time.time()) + 7 * 86400},
            ConditionExpression="attribute_not_exists(id)",
        )
    except ClientError as err:
        if err.response["Error"]["Code"] == "ConditionalCheckFailedException":
            raise AlreadyDone(message_id) from None
        raise


def _process(record):
    event = json.loads(record["body"])
    if event.get("type") != "order.paid":
        return
    _claim(record["messageId"])
    orders.update_item(
        Key={"id": event["order_id"]},
        UpdateExpression="SET #s = :paid, paid_at = :t",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":paid": "paid", ":t": event["paid_at"]},
    )


def handle(event, context=None):
    failures = []
    for record in event["Records"]:
        try:
            _process(record)
        except AlreadyDone:
            log.info("duplicate delivery %s ignored", record["messageId"])
        except Exception:
            log.exception("failed to process %s", record["messageId"])
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
''', "requirements.txt": "boto3>=1.34\n"})
add("cron", "node", {"handler.js": r'''const { Pool } = require("pg");
const { S3Client, ListObjectsV2Command, DeleteObjectsCommand } = require("@aws-sdk/client-s3");

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
const s3 = new S3Client({});
const RETENTION_DAYS = Number(process.env.RETENTION_DAYS || 30);

async function purgeSessions() {
  let total = 0;
  for (;;) {
    // small batches keep each statement short so it never blocks logins for long
    const { rowCount } = await pool.query(
      "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at < now() LIMIT 5000)",
    );
    total += rowCount;
    if (rowCount < 5000) return total;
  }
}

async function purgeExports() {
  const cutoff = Date.now() - RETENTION_DAYS * 86_400_000;
  let token;
  let deleted = 0;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: process.env.EXPORTS_BUCKET, Prefix: "exports/", ContinuationToken: token }));
    const old = (page.Contents || []).filter((o) => o.LastModified.getTime() < cutoff).map((o) => ({ Key: o.Key }));
    if (old.length) {
      await s3.send(new DeleteObjectsCommand({ Bucket: process.env.EXPORTS_BUCKET, Delete: { Objects: old, Quiet: true } }));
      deleted += old.length;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return deleted;
}

exports.handler = async () => {
  const [sessions, exportsDeleted] = await Promise.all([purgeSessions(), purgeExports()]);
  console.log(JSON.stringify({ job: "nightly-cleanup", sessions, exportsDeleted }));
  return { sessions, exportsDeleted };
};
''', "package.json": json.dumps({"name": "nightly-cleanup", "version": "1.0.0", "dependencies": {"pg": "^8.12.0", "@aws-sdk/client-s3": "^3.614.0"}}, indent=2)})
add("text", "node", {"handler.js": r'''const MarkdownIt = require("markdown-it");
const matter = require("gray-matter");
const sanitizeHtml = require("sanitize-html");

const md = new MarkdownIt({ html: true, linkify: true, typographer: true });

const SANITIZE = {
  allowedTags: sanitizeHtml.defaults.allowedTags.concat(["img", "h1", "h2", "del"]),
  allowedAttributes: { a: ["href", "title", "rel"], img: ["src", "alt", "title"], code: ["class"] },
  allowedSchemes: ["https", "mailto"],
  transformTags: { a: sanitizeHtml.simpleTransform("a", { rel: "nofollow noopener" }) },
};

exports.handler = async (event) => {
  const { content, data } = matter(event.markdown || "");
  const html = sanitizeHtml(md.render(content), SANITIZE);
  const words = content.split(/\s+/).filter(Boolean).length;
  return {
    title: data.title || null,
    tags: Array.isArray(data.tags) ? data.tags : [],
    readingMinutes: Math.max(1, Math.round(words / 230)),
    html,
  };
};
''', "package.json": json.dumps({"name": "md-render", "version": "1.0.0", "dependencies": {"markdown-it": "^14.1.0", "gray-matter": "^4.0.3", "sanitize-html": "^2.13.0"}}, indent=2)})
add("config", "node", {"handler.js": r'''const LaunchDarkly = require("@launchdarkly/node-server-sdk");

const client = LaunchDarkly.init(process.env.LD_SDK_KEY, { stream: false, timeout: 3 });
const ready = client.waitForInitialization({ timeout: 3 }).catch((err) => {
  console.warn("LaunchDarkly unavailable, serving defaults:", err.message);
});

exports.handler = async (event) => {
  await ready;
  const user = event.requestContext?.authorizer?.claims || {};
  const context = { kind: "user", key: user.sub || "anonymous", email: user.email, custom: { plan: user["custom:plan"] || "free" } };
  const [newCheckout, maxUploadMb] = await Promise.all([
    client.variation("new-checkout", context, false),
    client.variation("max-upload-mb", context, 25),
  ]);
  return {
    statusCode: 200,
    headers: { "cache-control": "private, max-age=30" },
    body: JSON.stringify({ newCheckout, maxUploadMb }),
  };
};
''', "package.json": json.dumps({"name": "flags", "version": "1.0.0", "dependencies": {"@launchdarkly/node-server-sdk": "^9.4.0"}}, indent=2)})
add("queue", "node", {"handler.js": r'''// MSK (Kafka) trigger: record values arrive base64-encoded, keyed by "topic-partition".
const { DynamoDBClient } = require("@aws-sdk/client-dynamodb");
const { DynamoDBDocumentClient, BatchWriteCommand } = require("@aws-sdk/lib-dynamodb");

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const TABLE = process.env.READINGS_TABLE;

const decode = (record) => {
  const value = JSON.parse(Buffer.from(record.value, "base64").toString("utf8"));
  return { sensorId: value.sensor, ts: value.ts, celsius: Math.round(value.temp * 10) / 10, offset: record.offset };
};

exports.handler = async (event) => {
  const readings = Object.values(event.records).flat().map(decode).filter((r) => r.celsius > -80 && r.celsius < 150);
  for (let i = 0; i < readings.length; i += 25) {
    let items = readings.slice(i, i + 25).map((r) => ({ PutRequest: { Item: r } }));
    for (let attempt = 0; items.length && attempt < 5; attempt++) {
      const res = await doc.send(new BatchWriteCommand({ RequestItems: { [TABLE]: items } }));
      items = res.UnprocessedItems?.[TABLE] || [];
      if (items.length) await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
    }
    if (items.length) throw new Error(`${items.length} readings not written after retries`);
  }
  return { written: readings.length };
};
''', "package.json": json.dumps({"name": "sensor-ingest", "version": "1.0.0", "dependencies": {"@aws-sdk/client-dynamodb": "^3.614.0", "@aws-sdk/lib-dynamodb": "^3.614.0"}}, indent=2)})


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
