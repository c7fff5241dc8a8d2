from flask import Flask, jsonify, request

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
