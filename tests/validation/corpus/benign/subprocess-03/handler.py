import asyncio
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
