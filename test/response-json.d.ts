// In tests, a reply's JSON is inspected field by field with expect(); `any` keeps those reads terse.
interface Response {
  json(): Promise<any>;
}
interface Body {
  json(): Promise<any>;
}
