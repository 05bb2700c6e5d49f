export { FrontmatterError, grayMatter, parseFrontmatter, safeMatterOptions } from './frontmatter';
export { nodeSkillFileReader, type SkillFileReader } from './reader';
export { SkillRegistry, type SkillRegistryOptions } from './registry';
export { SkillStore } from './skill-store';
export { validateSkillLibrary, type LibraryReport } from './validate-library';
