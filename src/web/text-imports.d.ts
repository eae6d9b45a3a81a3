// Files imported with a "?text" suffix are their contents as a string (tsup.config.ts, textImports).
declare module '*?text' {
  const text: string;
  export default text;
}
