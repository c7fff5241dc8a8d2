"""OAuth2 authorization-code callback for the 'Sign in with Google' button."""
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
