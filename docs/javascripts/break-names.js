// Code in a table cell may wrap after `.`, `_`, `(`, `[`, `,`, `|`, `=` or `/` where a
// letter or digit follows, and nowhere else: each such place gets a `<wbr>` (an optional
// line break). With docs/stylesheets/layout.css keeping names whole otherwise, a table as
// wide as the page wraps `langchain_tool_errors.ToolErrorMiddleware` after its dot or an
// underscore, never inside a word. A `<wbr>` adds no character, so copying and searching
// see the code as written.
(function () {
  const breakAfter = /([._(\[,|=\/])(?=[\p{L}\p{N}])/gu;
  function allowBreaks(root) {
    for (const code of root.querySelectorAll("td code, th code")) {
      const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
      const texts = [];
      for (let node = walker.nextNode(); node; node = walker.nextNode()) texts.push(node);
      for (const text of texts) {
        const parts = text.data.split(breakAfter);
        if (parts.length === 1) continue;
        const pieces = document.createDocumentFragment();
        for (let i = 0; i < parts.length; i++) {
          if (parts[i]) pieces.append(parts[i]);
          if (i % 2 === 1) pieces.append(document.createElement("wbr"));
        }
        text.replaceWith(pieces);
      }
    }
  }
  allowBreaks(document);
})();
