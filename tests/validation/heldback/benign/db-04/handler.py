import sqlite3, os

DB = os.path.join("/tmp", "notes.db")

def handle(event, context):
    con = sqlite3.connect(DB)
    con.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT)")
    if event["method"] == "POST":
        con.execute("INSERT INTO notes (body) VALUES (?)", (str(event["body"])[:2000],))
        con.commit()
    rows = con.execute("SELECT id, body FROM notes ORDER BY id DESC LIMIT 10").fetchall()
    con.close()
    return [{"id": i, "body": b} for i, b in rows]
