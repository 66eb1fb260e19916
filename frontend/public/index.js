// TensorBoard imports this module inside the plugin's iframe (whose <base> is this plugin's folder) and
// calls render(): we replace the iframe's page with the app.
export async function render() {
  document.location.href = "index.html";
}
