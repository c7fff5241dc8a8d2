// Open issues of a repository, through the GitHub REST API with our token.
exports.handle = async (event) => {
  const repo = (event.query && event.query.repo) || "nodejs/node";
  if (!/^[\w.-]+\/[\w.-]+$/.test(repo)) return { statusCode: 400, body: { error: "repo must be owner/name" } };
  try {
    const res = await fetch(`https://api.github.com/repos/${repo}/issues?state=open&per_page=10`, {
      headers: {
        authorization: `Bearer ${process.env.GITHUB_TOKEN || ""}`,
        accept: "application/vnd.github+json",
        "user-agent": "issue-digest",
      },
    });
    if (!res.ok) return { statusCode: res.status, body: { error: await res.text() } };
    const issues = await res.json();
    return { repo, issues: issues.map((i) => ({ number: i.number, title: i.title })) };
  } catch (err) {
    return { statusCode: 502, body: { error: String(err) } };
  }
};
