const MarkdownIt = require("markdown-it");
const matter = require("gray-matter");
const sanitizeHtml = require("sanitize-html");

const md = new MarkdownIt({ html: true, linkify: true, typographer: true });

const SANITIZE = {
  allowedTags: sanitizeHtml.defaults.allowedTags.concat(["img", "h1", "h2", "del"]),
  allowedAttributes: { a: ["href", "title", "rel"], img: ["src", "alt", "title"], code: ["class"] },
  allowedSchemes: ["https", "mailto"],
  transformTags: { a: sanitizeHtml.simpleTransform("a", { rel: "nofollow noopener" }) },
};

exports.handler = async (event) => {
  const { content, data } = matter(event.markdown || "");
  const html = sanitizeHtml(md.render(content), SANITIZE);
  const words = content.split(/\s+/).filter(Boolean).length;
  return {
    title: data.title || null,
    tags: Array.isArray(data.tags) ? data.tags : [],
    readingMinutes: Math.max(1, Math.round(words / 230)),
    html,
  };
};
