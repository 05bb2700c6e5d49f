/** Messages the engine itself adds to the conversation. */
export const emptyResponseGuidance =
  'Your last response was empty: it had neither text nor a tool call. Answer the user now, or call one of your tools.';

export const continueGuidance =
  'Your answer was cut off by the output limit. Continue exactly where you stopped, without repeating anything.';

export const roundBudgetGuidance =
  'You have used all the steps this turn allows. Do not call tools. Give the user your best answer now from what you ' +
  'have, and say plainly what you could not finish.';

export const cancelledGuidance =
  'The user cancelled. Do not call tools. Briefly explain what was stopped and what was not done.';

export const emptyRecoveryAnswer =
  'I could not produce an answer this time. Please try again, or rephrase your request.';

export const refusalMessage = 'The model declined to continue with this request.';

export const contextExceededMessage =
  "The conversation no longer fits the model's context window. Start a new session, or continue with a shorter request.";
