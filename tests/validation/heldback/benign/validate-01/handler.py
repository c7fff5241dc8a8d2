from pydantic import BaseModel, EmailStr, ValidationError

class Signup(BaseModel):
    email: EmailStr
    name: str
    age: int

def handle(event, context):
    try:
        s = Signup.model_validate(event["body"])
    except ValidationError as e:
        return {"statusCode": 422, "body": e.errors()}
    return {"welcome": s.name}
