import os
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
