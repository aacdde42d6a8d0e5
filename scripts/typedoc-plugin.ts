/**
 * Makes the API site read as a user's manual (loaded by typedoc.json's `plugin`):
 *
 * - a guide (a project document from `docs/guide/*.md`) is named by its first heading, up to a colon
 *   (`# Reliability: retries that never double-charge` → "Reliability"), instead of its file name, and listed
 *   in the "Guides" group of the navigation;
 * - the README's own `# tap-collections-sdk` heading is dropped from the landing page, which already carries
 *   the project's name as its title, and so is the block of contributor commands that opens the README;
 * - the top of every page's navigation links straight to where a newcomer starts: the two clients, the errors
 *   and the testing guide (typedoc's own `sidebarLinks` cannot link relative to each page).
 */
import { type Application, Converter, type DocumentReflection, JSX, type Reflection } from 'typedoc';

/** Label → path of the reflection in the project (module, then member), or the guide's name. */
const START_HERE: ReadonlyArray<readonly [label: string, path: readonly string[]]> = [
  ['TapClient', ['tap-collections-sdk', 'TapClient']],
  ['CollectionsClient', ['tap-collections-sdk', 'CollectionsClient']],
  ['Errors', ['tap-collections-sdk', 'TapCollectionsError']],
  ['Simulator for your tests', ['Testing your integration with the simulator']],
];

export function load(app: Application): void {
  app.converter.on(Converter.EVENT_CREATE_DOCUMENT, (_context, document: DocumentReflection) => {
    const heading = document.content
      .map((part) => part.text)
      .join('')
      .match(/^#\s+([^:\n]+)/m);
    if (heading?.[1]) document.name = heading[1].trim();
    document.frontmatter.group ??= 'Guides';
  });
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    const parts = context.project.readme ?? [];
    const [first] = parts;
    if (first?.kind === 'text') first.text = first.text.replace(/^\s*#\s+[^\n]*\n+/, '');
    // The repository's README opens with a clone's two commands (smoke flow, tests); the site is for users of the package.
    const opening = parts.findIndex((part) => part.text.trim() !== '');
    if (parts[opening]?.kind === 'code' && /npm ci/.test(parts[opening].text)) parts.splice(opening, 1);
  });
  app.renderer.hooks.on('sidebar.begin', (context) => {
    const links = START_HERE.map(([label, path]) => {
      const target: Reflection | undefined = context.page.project.getChildByName([...path]);
      if (!target) throw new Error(`typedoc-plugin: "${path.join(' › ')}" is not in the API site; update START_HERE`);
      return JSX.createElement('a', { href: context.urlTo(target) }, label);
    });
    return JSX.createElement('nav', { id: 'tsd-sidebar-links', class: 'tsd-navigation' }, ...links);
  });
}
