// The Docusaurus site of tests/docs_stacks.rs; the test copies examples.md (as docs/) and the
// npm package's dist/ (as static/svclab/) in before `docusaurus build`.
export default {
  title: "svclab on Docusaurus",
  url: "http://localhost",
  baseUrl: "/",
  onBrokenLinks: "throw",
  presets: [["classic", { docs: { routeBasePath: "/" }, blog: false }]],
  // The one line svclab needs:
  scripts: [{ src: "/svclab/svclab-example.js", type: "module" }],
};
