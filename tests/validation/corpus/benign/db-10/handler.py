import os

from sqlalchemy import create_engine, text

engine = create_engine(os.environ["DATABASE_URL"], pool_pre_ping=True)


def handle(event, context):
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT sku, stock FROM inventory WHERE stock < :n"), {"n": 5}).all()
    return [{"sku": s, "stock": n} for s, n in rows]
