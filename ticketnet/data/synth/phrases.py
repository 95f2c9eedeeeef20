"""The generator's phrase tables: slot fillers, request templates per team and sub-intent, and the hard cases' frames."""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------------
# Slot fillers. Templates name them as {slot}; [square brackets] mark the evidence span of a request.
# ---------------------------------------------------------------------------------------------------

POWERED = (
    "ProCut 450 mower", "ProCut 520 petrol mower", "cordless lawn mower", "RoboMow S2 robot mower", "lawn mower",
    "leaf blower", "AirGust 300 leaf blower", "hedge trimmer", "TrimMaster 52 hedge trimmer", "chainsaw",
    "TimberKing 40 chainsaw", "strimmer", "EdgePro 25 strimmer", "pressure washer", "AquaBlast 1800 pressure washer",
    "rotavator", "garden vacuum", "log splitter", "lawn scarifier", "cordless pruning saw", "electric tiller",
)
KITS = (
    "greenhouse kit", "GrowHouse 6x4 greenhouse", "garden bench", "rattan garden set", "patio table",
    "wooden shed", "EcoBin 330 compost bin", "compost bin", "raised bed kit", "potting bench", "garden arch",
    "pergola kit", "bistro set", "log store", "cold frame",
)
OTHER_GOODS = (
    "garden hose", "FlexiHose 30m hose", "hose reel", "sprinkler", "parasol", "wheelbarrow", "water butt",
    "bird feeder", "pair of secateurs", "set of solar lights", "fire pit", "hammock", "watering can",
    "wildflower seed mix", "pack of tomato seeds", "lawn feed",
)
SEEDS = ("tomato seeds", "wildflower seeds", "lawn seed", "sweet pea seeds", "carrot seeds", "sunflower seeds",
         "runner bean seeds")
WEARABLES = ("gardening gloves", "wellies", "garden boots", "work trousers", "gardening jacket")
SIZES = ("8", "9", "10", "M", "L", "XL", "small", "large")
PARTS = ("blade", "spark plug", "air filter", "battery", "charger", "starter cord", "spool", "chain", "nozzle",
         "hose connector", "grass box", "wheel", "drive belt", "safety key")
MODELS = ("the ProCut 520", "the petrol version", "the cordless model", "the 40V version", "the bigger model",
          "the AirGust 500", "the 8x6 size", "the next size up")
COLOURS = ("green", "grey", "black", "red", "blue", "anthracite", "sage", "natural wood")
CARDS = ("card", "Visa", "debit card", "Mastercard", "credit card", "Amex", "bank card")
PAY_METHODS = ("PayPal", "Apple Pay", "Klarna", "Google Pay", "my gift card", "my Visa", "my Mastercard")
COURIERS = ("DPD", "the courier", "Evri", "Royal Mail", "the driver", "Parcelforce", "the delivery driver", "Yodel")
CODES = ("SPRING20", "GARDEN10", "WELCOME15", "LARK5", "BBQ25", "GROW10", "SUMMER30")
FIRST_NAMES = ("Maria", "John", "Priya", "Tom", "Aisha", "Gareth", "Sue", "Dave", "Helen", "Mohammed", "Olga",
               "Ben", "Fiona", "Raj", "Karen", "Liam", "Joan", "Pete", "Chloe", "Wojciech", "Sian", "Ade")
SURNAMES = ("Smith", "Patel", "Jones", "Williams", "Brown", "Khan", "Evans", "Taylor", "Nowak", "Murphy",
            "O'Neill", "Hughes")
TOWNS = ("Leeds", "Bristol", "Norwich", "Cardiff", "York", "Exeter", "Derby", "Bath", "Harrogate", "Stroud")
STREETS = ("Elm Road", "Mill Lane", "Church Street", "Orchard Close", "Station Road", "Meadow Way",
           "Park Avenue", "The Green")
MAIL_DOMAINS = ("gmail.com", "outlook.com", "yahoo.co.uk", "btinternet.com", "hotmail.co.uk")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
SPANS = ("three days", "a week", "10 days", "two weeks", "over a week", "5 days", "nearly a month", "four days")

# ---------------------------------------------------------------------------------------------------
# Requests: (team, intent, templates). Each template has at least one [evidence] span.
# ---------------------------------------------------------------------------------------------------

INTENTS = (
    ("payments", "double_charge", (
        "[My card was charged twice for one order]. Can you [remove the duplicate charge]?",
        "I've been [charged twice] for {order}. Please [refund the second payment].",
        "There are [two identical payments of {amount}] on my statement for the same order.",
        "[You took the money twice] for my {product}. I only ordered one!",
        "[Double charge] on my {card} for {order}, {amount} each time. [Please reverse one of them].",
        "Why have I [paid twice]? My bank shows [{amount} taken two times] {date}.",
        "[The payment went out twice] for the same {product}, [I need the duplicate refunded].",
        "[My {card} was charged twice] for {order}. Can you [cancel the duplicate charge]?",
    )),
    ("payments", "unknown_charge", (
        "There is a [charge from Larkfield I don't recognise] on my {card}: {amount} {date}.",
        "[I was charged {amount}] but [I haven't placed any order].",
        "Can you explain [this {amount} payment to Larkfield]? [I didn't buy anything].",
        "[Unknown transaction of {amount}] from you on my statement. [What is it for]?",
        "My bank shows [a payment to Larkfield I never made].",
        "Please tell me [why you took {amount} from my account] {date}.",
    )),
    ("payments", "wrong_amount", (
        "[I was charged {amount} instead of {amount2}] for {order}.",
        "The [price at checkout was {amount2} but you took {amount}].",
        "[Wrong amount charged] for my {product}, the site said {amount2}.",
        "[You charged me more than the listed price] for the {product}. [Please refund the difference].",
        "My receipt says {amount2} but [my card was debited {amount}].",
        "[The total taken doesn't match my order confirmation] ({amount} instead of {amount2}).",
    )),
    ("payments", "declined", (
        "[My {card} keeps getting declined] at checkout.",
        "[Payment failed] three times when I tried to buy the {product}.",
        "I can't [pay with {paymethod}], it just says [payment error].",
        "[The checkout won't accept my card] even though there's money on it.",
        "Why is [my payment being declined]? My bank says everything is fine on their side.",
        "[Paying with {paymethod} isn't working] for {order}, it [keeps failing at the last step].",
    )),
    ("payments", "invoice", (
        "Could you [send me a VAT invoice] for {order}?",
        "[I need a receipt] for the {product} for my business expenses.",
        "[The invoice is missing my company name], can you [reissue the invoice]?",
        "[Where can I download the invoice] for the order I placed {date}?",
        "Please [email me a copy of the receipt] for {amount}.",
        "[The invoice shows the wrong VAT amount]. [Please correct the invoice].",
    )),
    ("payments", "promo_code", (
        "[The promo code {code} didn't work] at checkout.",
        "[I forgot to apply my discount code] {code}, can you [apply it now and refund the difference]?",
        "[Your code {code} says invalid] but the email says it's valid until Sunday.",
        "[The {code} discount wasn't taken off] the total.",
        "[My voucher wasn't applied] to {order}, I paid full price.",
        "Can I still [use code {code}] on an order I placed {date}?",
    )),
    ("payments", "price_adjustment", (
        "[The {product} dropped to {amount2} the day after I paid {amount}]. [Can you refund the price difference]?",
        "[Do you offer price matching]? I saw the {product} cheaper elsewhere.",
        "I bought the {product} {date} and [now it's on sale]. [Can I get the difference back]?",
        "[Please adjust the price] on {order}, it went down by {amount} a day later.",
        "[The sale price wasn't applied] to my {product} even though it showed in the basket.",
        "[Can you honour the sale price] for {order}?",
    )),
    ("payments", "charging_mistake", (
        "[You took payment for an order that was cancelled]. [When will I get the money back]?",
        "[I was charged for {order} even though the payment failed] and I had to order again.",
        "[The refund for the overcharge still hasn't reached my {card}].",
        "[My order was cancelled but the {amount} is still pending] on my card.",
        "[You charged a delivery fee on a free delivery order]. [Please refund the {amount}].",
        "[I was charged for an item that was out of stock]. [Please refund the charge].",
    )),
    ("payments", "payment_options", (
        "[Can I pay in instalments] for the {product}?",
        "[Klarna isn't showing as a payment option] at checkout.",
        "[How do I pay with a gift card] and a card together?",
        "[My gift card balance wasn't used] on {order}.",
        "[Can I change the payment method] on {order}?",
        "[Do you take {paymethod}] as payment?",
    )),
    ("delivery", "where_is_order", (
        "[Where is my order]? I ordered the {product} {date}.",
        "[My {product} still hasn't arrived] and it's been {days}.",
        "[Any update on {order}]? Still nothing here.",
        "[When will my {product} be delivered]?",
        "I'm still [waiting for {order}] which was due {date}.",
        "[It's been {days} and no sign of my parcel].",
        "[Has my order been dispatched yet]? It's {order}.",
    )),
    ("delivery", "tracking", (
        "[The tracking link doesn't work] for {order}.",
        "[Tracking hasn't updated] in {days}, [it just says in transit].",
        "[I haven't received a tracking number] for my {product}.",
        "[The tracking says delivered but nothing came].",
        "Could you [send me the tracking details] for {order}?",
        "[The tracking shows my parcel in the wrong city].",
    )),
    ("delivery", "late_or_stuck", (
        "[My parcel is stuck at the depot] for {days} now.",
        "[The delivery is late], it was promised {date}.",
        "[Still out for delivery] since {date}, [what's going on]?",
        "[The {product} missed the delivery date] you gave me.",
        "[{courier} keeps postponing the delivery].",
        "[My parcel hasn't moved since it left the warehouse] {date}.",
    )),
    ("delivery", "lost_parcel", (
        "[{courier} says my parcel was delivered but I never got it].",
        "[My parcel has been lost] by {courier}.",
        "[I think the parcel is lost], nothing for {days}.",
        "[The delivery photo shows someone else's door].",
        "[The box was left outside and has gone missing].",
        "[Please send a replacement for the lost parcel] with the {product}.",
    )),
    ("delivery", "wrong_address", (
        "[I entered the wrong delivery address] for {order}, [can you redirect the parcel]?",
        "[The parcel went to my old address] on {street}.",
        "[Please change the delivery address] on {order} to {house} {street}, {town}.",
        "[{courier} delivered my parcel to the wrong house].",
        "[The delivery address on the label is wrong].",
        "[Can the courier deliver to my work address instead]?",
    )),
    ("delivery", "delivery_slot", (
        "[Can I change my delivery slot] to Saturday?",
        "[I need to rebook the delivery] for the {product}, I won't be in {date}.",
        "[The driver came outside my delivery slot].",
        "[I missed the delivery] and the card says to rebook.",
        "[Can you deliver the {product} on a weekday afternoon] instead?",
        "[Nobody called before the two-man delivery] like you promised.",
    )),
    ("delivery", "partial_shipment", (
        "[Only part of my order arrived]. The {product} is missing.",
        "[I received one box out of two] for {order}.",
        "[The {product} wasn't in the parcel], only the {product2}.",
        "[Half of {order} is missing].",
        "[Where is the rest of my order]? Only the {product} came.",
        "[I got the {product} but not the {product2}] from the same order.",
    )),
    ("delivery", "damaged_in_transit", (
        "[The {product} arrived damaged], the box was crushed.",
        "[The parcel was damaged in transit] and the {product} is dented.",
        "[The courier dropped the box] and [it arrived broken].",
        "[The box was soaking wet and torn] when it arrived.",
        "[The {product} arrived with a cracked casing] straight out of the delivery box.",
        "[The packaging was smashed on arrival] and [the {product} is scratched].",
    )),
    ("delivery", "courier_conduct", (
        "[The delivery driver was rude] to my mum.",
        "[The courier threw my parcel over the fence].",
        "[The driver left the {product} in the rain] by the gate.",
        "[The courier didn't even knock], just left a card.",
        "[Can you tell the courier to leave parcels in the shed]?",
        "[Which courier is delivering] {order}?",
    )),
    ("returns", "start_return", (
        "[I'd like to return the {product}].",
        "[How do I send back] the {product}?",
        "[I want to return] {order}, [how does it work]?",
        "[Can I return the {product}] if I've opened the box?",
        "[Please arrange a return] for the {product}.",
        "[I need to send the {product} back].",
    )),
    ("returns", "return_label", (
        "[I need a return label] for {order}.",
        "[The return label link doesn't work].",
        "[Can you email me a returns label]? There wasn't one in the box.",
        "[The returns label won't print].",
        "[Can you arrange a collection for my return]? The {product} is too heavy for the post office.",
        "[Is the return label free] or do I pay postage?",
    )),
    ("returns", "exchange", (
        "[Can I exchange the {product} for the {colour} one]?",
        "[I'd like to swap the {wearable} for a size {size}].",
        "[I want to exchange the {product} for {model}].",
        "[Can I swap it for a different colour]? The {colour} doesn't go with our patio.",
        "[I ordered the wrong size] of {wearable}, [can I exchange them]?",
        "[Exchange please], wrong model, [I need {model}].",
    )),
    ("returns", "return_refund_status", (
        "[I sent the {product} back {date} and haven't had my refund yet].",
        "[Where is my refund for the returned {product}]?",
        "[You received my return] {days} ago but [still no refund].",
        "[When will I be refunded for my return]?",
        "[My return shows as received but the refund is still pending].",
        "[The refund for my return was less than I paid] for the {product}.",
    )),
    ("returns", "change_of_mind", (
        "[I changed my mind about the {product}], [can I send it back]?",
        "[I don't need the {product} anymore], [can I return it unused]?",
        "[It's too big for our garden], [I'd like to return it].",
        "[My husband already bought one], [so I want to return mine].",
        "[The {product} isn't what I expected], [I'd like to send it back for my money].",
        "[Ordered two by mistake], [want to return one].",
    )),
    ("returns", "return_window", (
        "[Is it too late to return the {product}]? I bought it {date}.",
        "[How long do I have to return] the {product}?",
        "[Can I still return something I bought {days} ago]?",
        "[Does the return window start from delivery] or from the order date?",
        "[I missed the 30 day return window by {days}], [can you make an exception]?",
        "[Can I return a sale item]?",
    )),
    ("returns", "return_in_transit", (
        "[I dropped my return at the post office] {date}, [did you get it]?",
        "[Has my return arrived at your warehouse] yet?",
        "[The courier never collected my return].",
        "[I've lost the receipt for my return drop-off].",
        "[My return has been on its way back to you] for {days}.",
        "[Can I return it in a store] instead of posting it?",
    )),
    ("returns", "partial_return", (
        "[I'd like to return one item from {order}] and keep the rest.",
        "[Can I return a gift] without the receipt?",
        "[I got the {product} as a gift] and [want to exchange it].",
        "[Return just the {product}] please, the other items are fine.",
        "[Can I return the {product} for store credit] instead?",
        "[I want to return the {product2} from the bundle] on its own.",
    )),
    ("product", "wont_start", (
        "[My {tool} won't start].",
        "[The {tool} cuts out after a few seconds].",
        "[The engine on my {tool} won't turn over].",
        "[I pull the starter cord and nothing happens].",
        "[The {tool} stopped working] halfway through the job.",
        "[The {tool} starts then dies] every time.",
    )),
    ("product", "assembly", (
        "[How do I assemble the {kit}]? The instructions make no sense.",
        "[The assembly instructions for the {kit} skip] step 7.",
        "[I can't fit the panels on the {kit}], [the holes don't line up].",
        "[Which screws go where] on the {kit}?",
        "[Is there a video showing how to put the {kit} together]?",
        "[Stuck assembling the {kit}], [the roof panel won't clip in].",
    )),
    ("product", "how_to_use", (
        "[How do I adjust the cutting height] on the {tool}?",
        "[What oil should I use] in the {tool}?",
        "[How do I change the {part}] on my {tool}?",
        "[How often should I sharpen the blade] on the {tool}?",
        "[What is the right setting for wet grass] on the {tool}?",
        "[How do I wind the line on the spool] of the strimmer?",
    )),
    ("product", "defect_in_use", (
        "[The handle snapped] after two weeks of normal use.",
        "[The {tool} is leaking oil].",
        "[The {tool} started making a grinding noise] when I use it.",
        "[The {gear} splits] every time I turn the tap on fully.",
        "[The blade came loose] while I was using the {tool}.",
        "[The {tool} gets very hot and smells of burning].",
        "[The {kit} got damaged after a month] of light use.",
    )),
    ("product", "warranty", (
        "[Is my {tool} still under warranty]? I bought it {date}.",
        "[I'd like a warranty repair] for the {tool}.",
        "[How do I make a warranty claim] for the {product}?",
        "[Does the warranty cover the motor] on the {tool}?",
        "[Can you repair the {tool} under guarantee]?",
        "[Where do I send the {tool} for repair]?",
    )),
    ("product", "spare_parts", (
        "[Do you sell a replacement {part}] for the {tool}?",
        "[I need a new {part}] for my {tool}.",
        "[Where can I buy spare parts] for the {product}?",
        "[Can I order a spare {part}]?",
        "[What's the part number for the {part}] on the {tool}?",
        "[The {part} wore out], [where do I get another one]?",
    )),
    ("product", "compatibility", (
        "[Will the {part} fit my {tool}]?",
        "[Does the hose connector fit a standard outdoor tap]?",
        "[Is this battery compatible with my other 18V tools]?",
        "[Will the {gear} work with my existing hose reel]?",
        "[Can I use the {tool} with an extension lead]?",
        "[Are the {kit} panels compatible with the older model]?",
    )),
    ("product", "battery", (
        "[The battery on my {tool} won't charge].",
        "[The charger light keeps flashing red].",
        "[The battery only lasts ten minutes] now.",
        "[How long should the battery take to charge]?",
        "[The battery gets hot while charging].",
        "[My {tool} battery drains] even when it's not in use.",
    )),
    ("product", "seeds_and_plants", (
        "[None of the {seeds} came up] after {days}.",
        "[How deep should I sow the {seeds}]?",
        "[When is the best time to plant the {seeds}]?",
        "[The {seeds} sprouted but then died].",
        "[Do the {seeds} need a greenhouse]?",
        "[Are the {seeds} safe for pets]?",
    )),
    ("account", "password", (
        "[I forgot my password] and [the reset email never arrives].",
        "[Can you reset my password]?",
        "[The password reset link has expired].",
        "[I can't log in], [it says my password is wrong].",
        "[The reset password link doesn't work].",
        "[How do I change my password]?",
    )),
    ("account", "login", (
        "[I can't log into my account].",
        "[The login page keeps loading forever].",
        "[I keep getting logged out of the app].",
        "[My login code never arrives] by text.",
        "[Sign in fails with an error message].",
        "[Two-factor authentication isn't working] for my account.",
    )),
    ("account", "locked_or_hacked", (
        "[My account is locked] after too many attempts.",
        "[I think my account has been hacked].",
        "[Someone changed my account password] without me knowing.",
        "[I got an email about a login to my account from another country].",
        "[Please unlock my account].",
        "[Someone else is using my account].",
    )),
    ("account", "profile", (
        "[How do I update my phone number] on my account?",
        "[My name is spelled wrong on my profile].",
        "[I can't save changes to my profile].",
        "[Please update my surname on the account], I got married.",
        "[The profile page won't let me edit my details].",
        "[Can I add a second phone number to my profile]?",
    )),
    ("account", "email_or_address_change", (
        "[I need to change the email address on my account] to {email}.",
        "[Please update my account email] to {email}.",
        "[How do I change my saved address] in my profile?",
        "I moved house, [please update the address on my account] to {house} {street}, {town}.",
        "[My saved address on my profile is still the old one] and I can't edit it.",
        "[I can't remove an old address from my address book].",
    )),
    ("account", "newsletter", (
        "[Please unsubscribe me from your newsletter].",
        "[Stop sending me marketing emails].",
        "[I keep getting promotional texts] even though I opted out.",
        "[How do I turn off the newsletter]?",
        "[Take me off your mailing list].",
        "[I unsubscribed but still get emails] every day.",
    )),
    ("account", "loyalty_points", (
        "[My loyalty points haven't been added] for {order}.",
        "[How many Green Points do I have]?",
        "[My points balance disappeared] from my account.",
        "[How do I redeem my loyalty points]?",
        "[My loyalty card isn't linked to my account].",
        "[The points from my last order are missing].",
    )),
    ("account", "order_history", (
        "[My order history page is empty].",
        "[I can't see my past orders in my account].",
        "[An old order is missing from my order history].",
        "[The orders page in my account shows an error].",
        "[How do I download my order history]?",
        "[My order history doesn't show] {order}.",
    )),
    ("account", "data_deletion", (
        "[Please delete my account].",
        "[I want all my data deleted] under GDPR.",
        "[How do I close my account]?",
        "[Can you send me a copy of the data you hold about me]?",
        "[Remove my personal details from your systems].",
        "[Delete my account and saved card details] please.",
    )),
)

# One-liners: the whole ticket is (nearly) the request, so the shortest tickets are 3-8 tokens.
SHORT = (
    ("payments", ("[charged twice]!!", "[card declined] again", "[refund the double charge] pls",
                  "[need an invoice] for {order}", "[promo code not working]", "[why was I charged {amount}]?",
                  "[payment keeps failing]")),
    ("delivery", ("[where is my order]??", "[parcel not arrived]", "[tracking not updating]",
                  "[wrong delivery address] on {order}", "[still no delivery]", "[parcel missing]",
                  "[when will {order} arrive]?")),
    ("returns", ("[return label please]", "[want to return] the {product}", "[refund for my return] not received",
                 "[exchange for a bigger size] pls", "[how do I return this]?", "[send back] {order}",
                 "[return collection] please")),
    ("product", ("[{tool} won't start]", "[battery not charging]", "[need a spare {part}]", "[blade broken]",
                 "[how to assemble] the {kit}?", "[warranty repair] please", "[{tool} leaking oil]")),
    ("account", ("[can't log in]", "[reset password] pls", "[account locked]", "[unsubscribe me]",
                 "[delete my account]", "[change my email] to {email}", "[points missing] from my account")),
)
SHORT_TAILS = ("", "", "", " pls", " please", "!", " asap", " help", "??", " thx")

# Non-evidence context that still leans towards the team (what a customer adds after the request).
DETAILS = (
    ("payments", ("I paid by {card}.", "The payment was {amount}.", "My bank has confirmed the transaction.",
                  "I checked my online banking this morning.", "The statement reference says LARKFIELD WEB.",
                  "I paid {date}.", "The money left my account {date}.")),
    ("delivery", ("It was supposed to come {date}.", "I've been in all day waiting.",
                  "The tracking number is {tracking}.", "I paid for next day delivery.",
                  "There's a side gate the driver can use.", "I live at {house} {street}, {town}.",
                  "It's a big box so it can't go through the letterbox.")),
    ("returns", ("It's still in the original box.", "I haven't used it.", "I bought it {date}.",
                 "All the packaging is intact.", "It's unused and boxed.", "I still have the receipt.",
                 "The item is in perfect condition.")),
    ("product", ("I've followed the manual.", "I've used it maybe five times.", "I bought it {date}.",
                 "I've checked the fuel and the oil.", "I bought it last spring.", "The serial number is {serial}.",
                 "It's been stored in the shed over winter.")),
    ("account", ("My username is {email}.", "I've tried on my phone and my laptop.", "I've cleared the cookies.",
                 "I've had the account for years.", "I tried the app and the website.",
                 "The account is under {email}.", "I use the same email as always.")),
)

# ---------------------------------------------------------------------------------------------------
# Hard cases. Negations set another team's topic aside; asides mention it in passing; ambiguous
# requests belong to two teams (the first is the routing convention).
# ---------------------------------------------------------------------------------------------------

# (sentence said before the request, sentence said after it, clause joined with ", but" to the request)
NEGATIONS = (
    ("delivery", (
        "It's not a delivery problem.", "It's not a delivery problem and I keep the {product}.",
        "It's not a delivery problem and I'm keeping the {product}.", "The parcel arrived fine.",
        "The parcel arrived on time, no issues with the delivery.", "Delivery was quick and the courier was great.",
        "This isn't about the delivery.", "The {product} came on time and in one piece.",
        "Nothing wrong with the delivery itself.", "Tracking was fine and it arrived {date}.",
    ), (
        "The delivery itself was fine.", "No problem with the delivery.", "This is not about the delivery.",
        "It's not a delivery issue.", "The parcel arrived on time by the way.",
    ), (
        "The parcel arrived on time", "The delivery was fine", "The courier was fine",
        "It isn't a delivery problem", "The {product} arrived in one piece",
    )),
    ("payments", (
        "The payment went through fine.", "This isn't a billing question.", "I was charged the right amount.",
        "There's no problem with my card.", "Payment was fine, I was charged correctly.",
        "It's not a payment problem.", "My card wasn't charged twice or anything like that.",
        "The invoice and the payment are all correct.",
    ), (
        "The payment itself was fine.", "It's not about the money or the charge.", "My card was charged correctly.",
        "This is not a payment issue.", "Billing is all fine.",
    ), (
        "The payment went through fine", "My card was charged correctly", "The price was right",
        "It's not a payment issue", "I paid without any trouble",
    )),
    ("returns", (
        "I don't want to return it.", "I'm keeping the {product}.", "I'm not sending it back.",
        "This isn't a return.", "I don't want an exchange.", "It's not a returns question.",
        "I'm happy to keep the {product}.", "I don't want to send anything back.",
    ), (
        "I'm not returning it.", "I don't want to send it back.", "This is not about a return.",
        "I'm keeping it, no exchange needed.", "No return needed.",
    ), (
        "I'm keeping the {product}", "I don't want to send anything back", "I'm not returning it",
        "This isn't a return", "I don't want an exchange",
    )),
    ("product", (
        "Nothing wrong with the product itself.", "The {product} works perfectly.", "The {product} itself is great.",
        "It's not a fault with the {product}.", "This is not a technical question.",
        "The {product} is fine, no defects.", "It's not a product problem.",
    ), (
        "The product itself is fine.", "Nothing is wrong with the {product}.", "It's not a product fault.",
        "The {product} works great, that's not the issue.", "No technical problem with it.",
    ), (
        "The {product} works perfectly", "The product itself is fine", "Nothing wrong with the {product}",
        "It's not a fault with the product", "The {product} is great",
    )),
    ("account", (
        "This isn't about my password.", "I can log in fine.", "My account is fine.", "It's not an account issue.",
        "I'm not asking about my login.", "My password works.", "Nothing wrong with my account.",
    ), (
        "My login works fine.", "This is not about my account.", "It's not a password problem.",
        "I can get into my account without problems.", "The account itself is fine.",
    ), (
        "I logged in without problems", "My account is fine", "My password works",
        "It's not an account problem", "I can sign in fine",
    )),
)

# Another team's topic mentioned in passing, usually marked as settled or incidental.
ASIDES = (
    ("delivery", (
        "The delivery was two days late, but that's sorted now.", "My last parcel came late too, never mind that.",
        "The courier left the box with my neighbour, which was fine.", "By the way, the driver was very late again.",
        "The parcel turned up late {date}, whatever.", "Tracking said Monday and it came Wednesday.",
        "The box was a bit battered when it arrived but everything inside was ok.",
        "I waited in all day for the delivery, which was annoying.",
    )),
    ("payments", (
        "I paid {amount} with {paymethod}.", "I used the code {code} at checkout.",
        "I got the refund for the other charge last week, thanks for that.", "I paid by {card} {date}.",
        "The invoice came through fine.", "By the way, your checkout was really slow to accept my card.",
        "I paid the full {amount} up front.", "The discount code worked nicely.",
    )),
    ("returns", (
        "I returned a hose last month and that went smoothly.", "I already sent the {product2} back {date}.",
        "The return for my last order was easy.", "I might return the {product2} later, but that's for another day.",
        "I've still got a return label from last time.", "My exchange last year was painless.",
        "The refund for my last return came quickly.",
    )),
    ("product", (
        "I've been using the {product} every weekend.", "I used the {tool} on the back lawn yesterday.",
        "The {kit} was a bit tricky to assemble but I managed.", "The battery on my old {tool} died last summer.",
        "I love the {product}, it does a great job.", "I had to sharpen the blade on my {tool} last week.",
        "The {tool} started first pull, lovely machine.",
    )),
    ("account", (
        "I had to reset my password to get in, which was annoying.", "I logged in to my account to check the order.",
        "I get your newsletter so I saw the offer there.", "I checked my order history in the app.",
        "I've already updated my email address on my profile.", "I used my loyalty points on this order.",
        "I finally remembered my password.",
    )),
)
ASIDE_LEADS = ("", "", "", "Anyway, ", "Anyway, what I need is this: ", "The reason I'm writing: ",
               "Different thing though: ", "My actual question: ")

# (convention team, other plausible team, template)
AMBIGUOUS = (
    ("delivery", "returns", "[The {product} arrived damaged] and [I'd like to send it back]."),
    ("delivery", "returns", "[The box was crushed and the {product} is cracked], [can I return it for a new one]?"),
    ("returns", "payments", "[I returned the {product} but you charged me again] for it."),
    ("returns", "payments", "[The refund for my return is {amount} short]."),
    ("product", "returns", "[The {tool} broke after a week], [I want my money back]."),
    ("product", "returns", "[The {tool} is faulty], [can I swap it for a new one]?"),
    ("payments", "account", "[I can't pay because the checkout keeps logging me out]."),
    ("account", "payments", "[I can't remove my saved card from my account]."),
    ("delivery", "account", "[My parcels keep going to my old address] even though I moved."),
    ("account", "delivery", "[Please change my address for this order and all future orders] to {house} {street}."),
    ("delivery", "product", "[A part is missing from the {kit} box]."),
    ("product", "delivery", "[The {kit} came without the screws], [I can't finish building it]."),
    ("payments", "returns", "[I was charged for the replacement] even though it was an exchange."),
    ("account", "payments", "[My loyalty points weren't taken off the total] at checkout."),
    ("payments", "delivery", "[I paid for next day delivery but it took a week], [I want the delivery fee back]."),
    ("delivery", "payments", "[I was charged {amount} but the order never shipped]."),
    ("returns", "product", "[The {product} doesn't fit our space], [can I swap it for {model}]?"),
    ("product", "delivery", "[The {tool} was dead on arrival], [it won't switch on at all]."),
)

# ---------------------------------------------------------------------------------------------------
# Wrapping: greetings, irrelevant context, closings, sign-offs.
# ---------------------------------------------------------------------------------------------------

GREETINGS = ("Hi,", "Hello,", "Hello team,", "Hi there,", "Dear Larkfield,", "Dear Sir/Madam,", "Good morning,",
             "Hey,", "Hiya,", "Hi Larkfield team,", "To whom it may concern,", "Hello Larkfield,", "Afternoon,")
FILLERS = (
    "We've had so much rain this week that the lawn is basically a pond.",
    "My neighbour has been on at me about the hedge for weeks.",
    "I'm getting the garden ready for my daughter's birthday party.",
    "The roses are finally blooming after a slow spring.",
    "We only moved in {date} and the garden is a jungle.",
    "I've been a customer for years and usually everything is great.",
    "Sorry for the long message, I'm not very good with computers.",
    "The dog keeps digging up the flower beds, which doesn't help.",
    "It's been a stressful week with work and the kids off school.",
    "I'm 78 and my grandson normally helps me with these things.",
    "The forecast says sun all weekend so I was hoping to get going.",
    "We're hosting a barbecue on Saturday for the whole street.",
    "My allotment committee recommended you to me.",
    "I spent the whole morning weeding the vegetable patch.",
    "The tomatoes are doing really well this year.",
    "My wife says I spend far too much time out there.",
    "Our cat has decided the new flower bed is her toilet.",
    "I tried calling but the line was busy for an hour.",
    "I'm writing this from my phone so excuse any typos.",
    "The grass hasn't been cut in three weeks and the neighbours are starting to look.",
    "Last year I bought lots of things from you and was always happy.",
    "It's my first proper garden so I'm still learning.",
    "We've just had the patio redone and it looks lovely.",
    "The hedges are taller than the house at this point.",
    "Honestly the frost killed half my plants last winter.",
    "I have a small garden in the city, nothing fancy.",
    "My husband normally deals with this sort of thing but he's away.",
    "The apple tree dropped about a hundred apples overnight.",
    "Spring is my favourite time of year in the garden.",
    "We've got a wedding in the garden in two weeks, so timing matters.",
    "The kids want to camp in the garden all summer.",
    "I've been trying to sort this for a while now and I'm losing patience.",
)
ORDER_REFS = ("Order number {ref}.", "It's {order}.", "Ref: {ref}.", "The order is {ref}.", "Order: {ref}.",
              "This is about {order}.", "My order number is {ref}.")
CLOSINGS = ("Please help.", "Can you help?", "Thanks for sorting this.", "I'd appreciate a quick reply.",
            "This is really frustrating.", "Please get back to me asap.", "Hope you can sort it.",
            "Look forward to hearing from you.", "What are my options?", "Please advise.")
SIGNOFFS = ("Thanks, {name}", "Thank you.", "Cheers, {name}", "Regards, {name} {surname}", "Kind regards, {name}",
            "Many thanks", "Thanks in advance!", "Best, {name}", "{name}", "Thanks", "Cheers")
FOLLOW_UP_LEADS = ("Also, ", "And ", "On top of that, ", "Another thing: ", "Plus ", "While I'm at it, ")
