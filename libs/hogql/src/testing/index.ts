export {
  generateExpression,
  generateHostileExpression,
  generatePropertyFilter,
  seededRandom,
} from './expression-generator.util';
export { generateStatement } from './statement-generator.util';
