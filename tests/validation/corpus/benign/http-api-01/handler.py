import os

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
