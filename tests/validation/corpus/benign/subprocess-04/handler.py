import shutil
import subprocess


def handle(event, context=None):
    git = shutil.which("git")
    if git is None:
        return {"error": "git not available"}
    out = subprocess.run([git, "--version"], capture_output=True, text=True, check=True)
    env_out = subprocess.run(["env"], capture_output=True, text=True, env={"LC_ALL": "C"}, check=True)
    return {"git": out.stdout.strip(), "locale_vars": len(env_out.stdout.splitlines())}
